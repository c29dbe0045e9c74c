"""``spate console``: serve the web console for a cluster.

The console is read-only when asked (``--read-only``) and by default when
the client connects with security settings (a ``--command-config`` whose
``security.protocol`` is not PLAINTEXT): a secured cluster is one whose
operators decide who changes it, not a browser tab.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from spate.cli.common import add_connection_arguments, client_errors, client_security, positive_int
from spate.cli.errors import CliError

DEFAULT_PORT = 8080


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "console", help="serve the web console (cluster, topics, messages, groups and lag)",
        description="Serve a web console for the cluster at http://HOST:PORT/.",
    )
    add_connection_arguments(parser)
    parser.add_argument("--port", type=positive_int, default=DEFAULT_PORT, help=f"HTTP port (default: {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    access = parser.add_mutually_exclusive_group()
    access.add_argument("--read-only", action="store_true", default=None,
                        help="hide and refuse every action (the default with a secured connection)")
    access.add_argument("--read-write", dest="read_only", action="store_false",
                        help="allow actions even over a secured connection")
    parser.set_defaults(func=run)


def is_read_only(requested: bool | None, options: dict[str, Any]) -> bool:
    """Read-only when asked, and by default when the connection is secured."""
    if requested is not None:
        return requested
    return str(options.get("security_protocol", "PLAINTEXT")).upper() != "PLAINTEXT"


def run(args: argparse.Namespace) -> int:
    from spate.console.cluster_view import ClusterView
    from spate.console.server import ConsoleApp, ConsoleSettings, make_server

    options = client_security(args)
    read_only = is_read_only(args.read_only, options)
    with client_errors(args.bootstrap_server):
        view = ClusterView(args.bootstrap_server, options, api_timeout_ms=args.api_timeout_ms)
        view.overview()  # fail now, with a clear message, if the cluster is unreachable
    try:
        server = make_server(ConsoleApp(view, ConsoleSettings(read_only=read_only)), args.host, args.port)
    except OSError as exc:
        view.close()
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = server.server_address[:2]
    mode = " (read-only)" if read_only else ""
    print(f"Spate console for {args.bootstrap_server} at http://{host}:{port}/{mode}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
        view.close()
    return 0

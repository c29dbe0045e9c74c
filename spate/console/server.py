"""The console's HTTP server: routes, read-only enforcement, and turning client errors into pages.

Standard library only (``http.server``): one thread per request, each
reaching the cluster through the shared :class:`ClusterView`. GET never
changes anything; every action is a POST, and in read-only mode every
POST is refused with 403 whatever the page showed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from spate.client import AdminError, ClientError, ErrorCode, KafkaError
from spate.console import actions, group_pages, layout, message_pages, topic_pages
from spate.console.api import ApiRequest, handle_api
from spate.console.browse_query import parse_browse_query
from spate.console.cluster_view import ClusterView

MAX_FORM_BYTES = 64 * 1024


@dataclass
class ConsoleSettings:
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: str
    content_type: str = "text/html; charset=utf-8"
    location: str | None = None


def redirect(location: str) -> Response:
    return Response(HTTPStatus.SEE_OTHER, "", location=location)


class ConsoleApp:
    """Requests in, responses out; no sockets here, so tests can call it directly."""

    def __init__(self, view: ClusterView, settings: ConsoleSettings) -> None:
        self.view = view
        self.settings = settings

    def page(self, title: str, body: str, status: int = HTTPStatus.OK, **kwargs: Any) -> Response:
        return Response(status, layout.page(title, body, read_only=self.settings.read_only, **kwargs))

    def handle(self, method: str, raw_path: str, form: dict[str, str]) -> Response:
        split = urlsplit(raw_path)
        path = split.path
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        try:
            if path.startswith("/api/"):
                return _json(*handle_api(self.view, ApiRequest(method, path, query)))
            if method == "POST":
                if self.settings.read_only:
                    raise actions.ReadOnlyError()
                return self._post(path, form)
            return self._get(path, query)
        except (actions.ActionRefused, KafkaError, ClientError) as exc:
            status, title = _failure(exc)
            if path.startswith("/api/"):
                return _json(status, {"error": _first_line(exc)})
            return Response(status, layout.error_page(title, _first_line(exc), read_only=self.settings.read_only))

    def _get(self, path: str, query: dict[str, str]) -> Response:
        if path == "/favicon.ico":
            return Response(HTTPStatus.NO_CONTENT, "", "text/plain")
        for pattern, handler in self._get_routes():
            match = re.fullmatch(pattern, path)
            if match:
                return handler(*[unquote(g) for g in match.groups()], query)
        return Response(HTTPStatus.NOT_FOUND, layout.error_page("Not found", f"no page at {path}",
                                                                read_only=self.settings.read_only))

    def _get_routes(self) -> list[tuple[str, Callable[..., Response]]]:
        return [
            (r"/", lambda q: self.page("Overview", topic_pages.overview_body(self.view.overview()))),
            (r"/topics", lambda q: self.page("Topics", topic_pages.topics_body(
                self.view.topics(), read_only=self.settings.read_only), flash=q.get("flash", ""))),
            (r"/topics/([^/]+)", self._topic_page),
            (r"/topics/([^/]+)/delete", self._delete_page),
            (r"/topics/([^/]+)/messages", self._messages_page),
            (r"/replication", lambda q: self.page("Replication", topic_pages.replication_body(self.view.topics()))),
            (r"/groups", lambda q: self.page("Consumer groups", group_pages.groups_body(self.view.groups()))),
            (r"/groups/([^/]+)", self._group_page),
        ]

    def _topic_page(self, name: str, query: dict[str, str]) -> Response:
        topic = self.view.topic(name)
        body = topic_pages.topic_body(topic, self.view.partitions(topic), self.view.topic_configs(name),
                                      read_only=self.settings.read_only)
        return self.page(f"Topic {name}", body, flash=query.get("flash", ""))

    def _delete_page(self, name: str, query: dict[str, str]) -> Response:
        if self.settings.read_only:
            raise actions.ReadOnlyError()
        self.view.topic(name)
        return self.page(f"Delete topic {name}?", topic_pages.delete_confirmation_body(name))

    def _messages_page(self, name: str, query: dict[str, str]) -> Response:
        topic = self.view.topic(name)
        browse = parse_browse_query(query)
        records, start = self.view.read_records(name, browse.partition, offset=browse.offset,
                                                timestamp_ms=browse.timestamp_ms, limit=browse.limit)
        next_offset = records[-1].offset + 1 if records else start
        body = message_pages.browser_body(topic, browse, records, next_offset)
        return self.page(f"Messages of {name}", body, script=message_pages.FOLLOW_SCRIPT)

    def _group_page(self, group_id: str, query: dict[str, str]) -> Response:
        group = self.view.group(group_id)
        body = group_pages.group_body(group, self.view.group_lag(group_id), read_only=self.settings.read_only)
        return self.page(f"Group {group_id}", body, flash=query.get("flash", ""), script=group_pages.LAG_CHART_SCRIPT)

    def _post(self, path: str, form: dict[str, str]) -> Response:
        if path == "/topics":
            name = actions.create_topic(self.view, form)
            return redirect(topic_pages.topic_href(name, "?flash=created"))
        match = re.fullmatch(r"/topics/([^/]+)/delete", path)
        if match:
            name = unquote(match.group(1))
            actions.delete_topic(self.view, name, form)
            return redirect("/topics?" + urlencode({"flash": f"deleted topic {name}"}))
        match = re.fullmatch(r"/groups/([^/]+)/reset", path)
        if match:
            group_id = unquote(match.group(1))
            plan = actions.reset_plan(self.view, group_id, form)
            if form.get("confirm") != "yes":
                return self.page(f"Reset offsets of {group_id}?", group_pages.reset_confirmation_body(plan))
            actions.apply_reset(self.view, plan)
            return redirect(group_pages.group_href(group_id, "?flash=offsets+reset"))
        return Response(HTTPStatus.NOT_FOUND, layout.error_page("Not found", f"no action at {path}", read_only=False))


def _failure(exc: Exception) -> tuple[int, str]:
    """The HTTP status and page title for a refused action or a cluster error."""
    if isinstance(exc, actions.ReadOnlyError):
        return HTTPStatus.FORBIDDEN, "Refused"
    if isinstance(exc, actions.ActionRefused):
        return HTTPStatus.BAD_REQUEST, "Not done"
    if isinstance(exc, AdminError) and all(
        e.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for e in exc.errors.values()
    ):
        return HTTPStatus.NOT_FOUND, "No such topic"
    return HTTPStatus.BAD_GATEWAY, "The cluster said no"


def _json(status: int, document: Any) -> Response:
    return Response(status, json.dumps(document), content_type="application/json")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]


class _Handler(BaseHTTPRequestHandler):
    app: ConsoleApp  # set on the subclass serve() makes
    server_version = "SpateConsole"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer("GET", {})

    def _answer(self, method: str, form: dict[str, str]) -> None:
        try:
            response = self.app.handle(method, self.path, form)
        except Exception as exc:  # a bug or a lost connection: say so rather than drop the request
            message = f"{type(exc).__name__}: {_first_line(exc)}"
            response = Response(HTTPStatus.INTERNAL_SERVER_ERROR, layout.error_page(
                "Console error", message, read_only=self.app.settings.read_only))
        self._send(response)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_FORM_BYTES:
            self._send(Response(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "form too large", "text/plain"))
            return
        raw = self.rfile.read(length).decode("utf-8", errors="replace")
        form = {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}
        self._answer("POST", form)

    def _send(self, response: Response) -> None:
        data = response.body.encode("utf-8")
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        # Scripts only from this page itself; nothing is loaded from elsewhere.
        self.send_header("Content-Security-Policy",
                         "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
        self.send_header("X-Content-Type-Options", "nosniff")
        if response.location:
            self.send_header("Location", response.location)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the console prints its address once, not a line per request


def make_server(app: ConsoleApp, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("ConsoleHandler", (_Handler,), {"app": app})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server

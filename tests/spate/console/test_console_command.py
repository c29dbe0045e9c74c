"""``spate console``'s options: read-only by default over a secured connection, client properties."""

from __future__ import annotations

import pytest

from spate.cli.common import client_security
from spate.cli.console import is_read_only
from spate.cli.errors import CliError
from spate.cli.main import build_parser


def test_read_only_by_default_when_the_connection_is_secured() -> None:
    assert is_read_only(None, {}) is False
    assert is_read_only(None, {"security_protocol": "SASL_SSL"}) is True
    assert is_read_only(None, {"security_protocol": "plaintext"}) is False


def test_an_explicit_choice_wins() -> None:
    assert is_read_only(True, {}) is True
    assert is_read_only(False, {"security_protocol": "SSL"}) is False


def test_command_config_properties_become_client_options(tmp_path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                          "sasl.username=alice\nsasl.password=secret\n")
    args = build_parser().parse_args(["console", "--command-config", str(properties)])
    options = client_security(args)
    assert options["security_protocol"] == "SASL_PLAINTEXT" and options["sasl_mechanism"] == "SCRAM-SHA-256"
    assert is_read_only(args.read_only, options) is True


def test_unknown_client_properties_are_named(tmp_path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=GSSAPI_SOMETHING\n")
    with pytest.raises(CliError, match="security.protocol"):
        client_security(build_parser().parse_args(["console", "--command-config", str(properties)]))


def test_command_line() -> None:
    args = build_parser().parse_args(["console", "--bootstrap-server", "b:9092", "--port", "9000", "--read-only"])
    assert (args.bootstrap_server, args.port, args.read_only) == ("b:9092", 9000, True)
    assert build_parser().parse_args(["console"]).read_only is None


def test_an_unreachable_cluster_fails_at_start_naming_the_address(capsys: pytest.CaptureFixture[str]) -> None:
    from spate.cli.main import main
    from tests.support.ports import free_port

    address = f"127.0.0.1:{free_port()}"
    assert main(["console", "--bootstrap-server", address, "--api-timeout-ms", "1000"]) == 1
    assert address in capsys.readouterr().err

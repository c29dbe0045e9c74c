"""metrics.http.listener: http://host:port, empty or unset for off, anything else refused naming the property."""

from __future__ import annotations

import pytest

from broker_core.config.broker_config import load_broker_config
from broker_core.config.definitions import InvalidValue
from broker_core.config.errors import ConfigError
from broker_core.metrics.listener_address import MetricsListener, parse_metrics_listener


@pytest.mark.parametrize(("text", "expected"), [
    ("http://127.0.0.1:9404", MetricsListener("127.0.0.1", 9404)),
    ("http://localhost:0/", MetricsListener("localhost", 0)),
    ("http://[::1]:9404", MetricsListener("::1", 9404)),
    ("http://:9404", MetricsListener("0.0.0.0", 9404)),
])  # fmt: skip
def test_a_listener_is_http_host_and_port(text: str, expected: MetricsListener) -> None:
    assert parse_metrics_listener(text) == expected


@pytest.mark.parametrize("text", [None, "", "   "])
def test_empty_or_unset_turns_metrics_off(text: str | None) -> None:
    assert parse_metrics_listener(text) is None


@pytest.mark.parametrize("text", ["127.0.0.1:9404", "https://127.0.0.1:9404", "http://127.0.0.1", "http://h:70000",
                                  "http://h:port"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(InvalidValue):
        parse_metrics_listener(text)


def test_the_url_names_the_metrics_path() -> None:
    assert MetricsListener("::1", 9404).url == "http://[::1]:9404/metrics"
    assert MetricsListener("127.0.0.1", 9404).url == "http://127.0.0.1:9404/metrics"


def test_a_bad_value_fails_configuration_with_a_message_naming_the_property() -> None:
    with pytest.raises(ConfigError) as failure:
        load_broker_config(None, ["metrics.http.listener=localhost:9404"])
    assert "metrics.http.listener" in str(failure.value)


def test_the_property_is_unset_by_default() -> None:
    assert load_broker_config(None, []).get_optional_str("metrics.http.listener") is None

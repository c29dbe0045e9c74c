"""Option rules the source and sink share: aliases that must agree, kafka.* settings, one error per side."""

from __future__ import annotations

import pytest

from spark_ext.kafka_options import OptionError
from spark_ext.options import SourceOptionError, parse_source_options
from spark_ext.sink_options import SinkOptionError, parse_sink_options

SOURCE = {"subscribe": "orders"}
SINK = {"topic": "orders"}


def source_error(**options: str) -> SourceOptionError:
    with pytest.raises(SourceOptionError) as caught:
        parse_source_options({**SOURCE, **options}, streaming=False)
    return caught.value


def sink_error(**options: str) -> SinkOptionError:
    with pytest.raises(SinkOptionError) as caught:
        parse_sink_options({**SINK, **options}, streaming=False)
    return caught.value


def test_both_sides_raise_an_option_error_that_names_the_side():
    source, sink = source_error(), sink_error()
    assert isinstance(source, OptionError) and isinstance(sink, OptionError)
    assert str(source).startswith("spate source option 'kafka.bootstrap.servers'")
    assert str(sink).startswith("spate sink option 'kafka.bootstrap.servers'")


@pytest.mark.parametrize("raise_error", [source_error, sink_error])
def test_bootstrap_servers_and_its_kafka_alias_must_agree(raise_error):
    conflict = raise_error(**{"bootstrap.servers": "a:1", "kafka.bootstrap.servers": "b:2"})
    assert conflict.option == "bootstrap.servers" and "set only one" in str(conflict)
    malformed = raise_error(**{"kafka.bootstrap.servers": "a:1,nohost"})
    assert malformed.option == "kafka.bootstrap.servers" and "'nohost' is not host:port" in str(malformed)


def test_both_sides_accept_the_alias_alone_and_equal_values_under_both_names():
    servers = {"bootstrap.servers": "h:9092", "kafka.bootstrap.servers": " h:9092 "}
    assert parse_source_options({**SOURCE, **servers}, streaming=False).bootstrap_servers == "h:9092"
    assert parse_sink_options({**SINK, **servers}, streaming=False).bootstrap_servers == "h:9092"


@pytest.mark.parametrize(
    ("raise_error", "client"), [(source_error, "consumer"), (sink_error, "producer")]
)
def test_kafka_settings_are_checked_and_unknown_ones_refused(raise_error, client):
    base = {"kafka.bootstrap.servers": "h:1"}
    negative = raise_error(**base, **{"kafka.retry.backoff.ms": "-5"})
    assert negative.option == "kafka.retry.backoff.ms" and "at least 0, not -5" in str(negative)
    not_a_number = raise_error(**base, **{"kafka.request.timeout.ms": "soon"})
    assert "must be a whole number, not 'soon'" in str(not_a_number)
    unknown = raise_error(**base, **{"kafka.send.buffer.bytes": "1"})
    assert f"not a {client} setting" in str(unknown)
    assert "must be one of PLAINTEXT" in str(raise_error(**base, **{"kafka.security.protocol": "TLS"}))


def test_aliases_compare_as_each_option_reads_them():
    # isolation levels are case-insensitive, so differing case is no conflict.
    options = {"kafka.bootstrap.servers": "h:1", "isolation.level": "READ_COMMITTED",
               "kafka.isolation.level": "read_committed"}
    assert parse_source_options({**SOURCE, **options}, streaming=False).isolation_level == "read_committed"
    conflict = source_error(**{"kafka.bootstrap.servers": "h:1", "groupId": "a", "kafka.group.id": "b"})
    assert conflict.option == "groupId" and "differs from kafka.group.id" in str(conflict)

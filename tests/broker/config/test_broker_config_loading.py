"""Loading broker config: layers, types, synonyms, derived settings, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.config import (
    BROKER_PROPERTIES,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    Listener,
    load_broker_config,
)
from broker_core.config.definitions import render_value


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "broker.properties"
    path.write_text(text, encoding="utf-8")
    return path


def config(**props: str) -> BrokerConfig:
    return BrokerConfig.from_properties({key.replace("_", "."): value for key, value in props.items()})


# --- defaults ----------------------------------------------------------------


def test_defaults_match_kafka_where_spate_keeps_them() -> None:
    defaults = BrokerConfig.from_properties()
    assert defaults.get_int("num.partitions") == 1
    assert defaults.get_int("default.replication.factor") == 1
    assert defaults.get_int("log.segment.bytes") == 1073741824
    assert defaults.get_int("log.retention.hours") == 168
    assert defaults.get_int("log.retention.bytes") == -1
    assert defaults.get_int("log.retention.check.interval.ms") == 300000
    assert defaults.get_int("log.index.interval.bytes") == 4096
    assert defaults.get_int("log.segment.delete.delay.ms") == 60000
    assert defaults.get_int("message.max.bytes") == 1048588
    assert defaults.get_bool("auto.create.topics.enable") is True
    assert defaults.get_bool("delete.topic.enable") is True
    assert defaults.get_int("num.io.threads") == 8
    assert defaults.get_int("queued.max.requests") == 500
    assert defaults.get_int("socket.request.max.bytes") == 104857600
    assert defaults.get_int("min.insync.replicas") == 1
    assert defaults.get_bool("unclean.leader.election.enable") is False
    assert defaults.get_int("replica.lag.time.max.ms") == 30000
    assert defaults.get_int("offsets.topic.num.partitions") == 50
    assert defaults.get_int("offsets.retention.minutes") == 10080
    assert defaults.get_int("group.initial.rebalance.delay.ms") == 3000
    assert defaults.get_int("group.min.session.timeout.ms") == 6000
    assert defaults.get_int("group.max.session.timeout.ms") == 1800000
    assert defaults.get_int("transaction.state.log.num.partitions") == 50
    assert defaults.get_int("transaction.max.timeout.ms") == 900000
    assert defaults.get_list("log.cleanup.policy") == ("delete",)
    assert defaults.get_str("log.message.timestamp.type") == "CreateTime"


def test_defaults_give_a_single_embedded_broker_on_localhost() -> None:
    defaults = BrokerConfig.from_properties()
    assert defaults.node_id == 0
    assert defaults.listeners == (Listener("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092),)
    assert defaults.advertised_listeners == defaults.listeners
    assert defaults.log_dirs == (Path("/tmp/spate-logs"),)
    assert defaults.zookeeper_connect is None
    assert defaults.explicit == frozenset()


@pytest.mark.parametrize("name", sorted(BROKER_PROPERTIES))
def test_every_default_passes_its_own_validation(name: str) -> None:
    definition = BROKER_PROPERTIES[name]
    if definition.default is not None:
        assert definition.parse(render_value(definition.default) or "") == definition.default


# --- layers ---------------------------------------------------------------------


def test_file_values_override_defaults_and_overrides_beat_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "num.io.threads=4\nnum.network.threads=2\n")
    loaded = load_broker_config(path, ["num.io.threads=16"])
    assert loaded.get_int("num.io.threads") == 16
    assert loaded.get_int("num.network.threads") == 2
    assert loaded.path == path
    assert loaded.explicit == {"num.io.threads", "num.network.threads"}


def test_last_duplicate_in_a_file_wins(tmp_path: Path) -> None:
    loaded = load_broker_config(write(tmp_path, "num.partitions=2\nnum.partitions=5\n"))
    assert loaded.get_int("num.partitions") == 5


def test_overrides_apply_without_a_file() -> None:
    loaded = load_broker_config(None, ["log.dirs=/data/a,/data/b", "node.id=3"])
    assert loaded.log_dirs == (Path("/data/a"), Path("/data/b"))
    assert loaded.node_id == 3


def test_override_value_may_contain_equals() -> None:
    loaded = load_broker_config(None, ["zookeeper.connect=zk:2181/spate=x"])
    assert loaded.zookeeper_connect == "zk:2181/spate=x"


def test_values_are_trimmed_and_booleans_case_insensitive() -> None:
    loaded = config(num_partitions="  7 ", auto_create_topics_enable=" FALSE ")
    assert loaded.get_int("num.partitions") == 7
    assert loaded.get_bool("auto.create.topics.enable") is False


def test_as_properties_rebuilds_an_equal_config(tmp_path: Path) -> None:
    loaded = load_broker_config(write(tmp_path, "log.cleanup.policy = compact , delete\nnum.partitions=3\n"))
    rebuilt = BrokerConfig.from_properties(loaded.as_properties())
    assert rebuilt.values == loaded.values
    assert loaded.as_properties()["log.cleanup.policy"] == "compact,delete"


# --- synonyms and precedence -------------------------------------------------------------


RETENTION_TABLE = [
    ({}, 168 * 3_600_000),
    ({"log.retention.hours": "24"}, 24 * 3_600_000),
    ({"log.retention.minutes": "30"}, 30 * 60_000),
    ({"log.retention.minutes": "30", "log.retention.hours": "24"}, 30 * 60_000),
    ({"log.retention.ms": "1234"}, 1234),
    ({"log.retention.ms": "1234", "log.retention.minutes": "30", "log.retention.hours": "24"}, 1234),
    ({"log.retention.ms": "-1"}, -1),
    ({"log.retention.ms": "-5"}, -1),
    ({"log.retention.hours": "-1"}, -1),
    ({"log.retention.minutes": "-1", "log.retention.hours": "24"}, -1),
]


@pytest.mark.parametrize("props, expected_ms", RETENTION_TABLE)
def test_retention_ms_beats_minutes_beats_hours(props: dict[str, str], expected_ms: int) -> None:
    assert BrokerConfig.from_properties(props).log_retention_ms == expected_ms


@pytest.mark.parametrize("props", [{"log.retention.ms": "0"}, {"log.retention.minutes": "0"}, {"log.retention.hours": "0"}])
def test_zero_retention_is_rejected(props: dict[str, str]) -> None:
    key = next(iter(props))
    with pytest.raises(ConfigError, match="at least 1 ms") as info:
        BrokerConfig.from_properties(props)
    assert info.value.key == key


def test_roll_ms_beats_roll_hours() -> None:
    assert config(log_roll_hours="2").log_roll_ms == 2 * 3_600_000
    assert BrokerConfig.from_properties({"log.roll.hours": "2", "log.roll.ms": "500"}).log_roll_ms == 500


def test_flush_interval_ms_falls_back_to_the_scheduler_interval() -> None:
    assert BrokerConfig.from_properties().log_flush_interval_ms == 2**63 - 1
    assert config(log_flush_scheduler_interval_ms="2000").log_flush_interval_ms == 2000
    props = {"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "10"}
    assert BrokerConfig.from_properties(props).log_flush_interval_ms == 10


def test_node_id_and_broker_id_are_one_setting() -> None:
    assert config(broker_id="4").node_id == 4
    assert config(node_id="5").node_id == 5
    assert BrokerConfig.from_properties({"node.id": "6", "broker.id": "6"}).node_id == 6


def test_conflicting_node_id_and_broker_id_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="conflicts with broker.id=2") as info:
        load_broker_config(write(tmp_path, "broker.id=2\nnode.id=1\n"))
    assert info.value.line == 2


def test_log_dirs_beats_log_dir() -> None:
    assert config(log_dir="/one").log_dirs == (Path("/one"),)
    assert BrokerConfig.from_properties({"log.dir": "/one", "log.dirs": "/two,/three"}).log_dirs == (
        Path("/two"),
        Path("/three"),
    )


def test_metadata_dir_defaults_to_the_first_log_dir() -> None:
    assert config(log_dirs="/a,/b").metadata_dir == Path("/a")
    assert BrokerConfig.from_properties({"log.dirs": "/a", "metadata.log.dir": "/meta"}).metadata_dir == Path("/meta")


def test_zookeeper_connection_timeout_defaults_to_session_timeout() -> None:
    assert config(zookeeper_session_timeout_ms="9000").zookeeper_connection_timeout_ms == 9000
    assert config(zookeeper_connect="zk1:2181,zk2:2181").zookeeper_connect == "zk1:2181,zk2:2181"


# --- listeners ----------------------------------------------------------------------


LISTENER_TABLE = [
    ("PLAINTEXT://127.0.0.1:9092", [Listener("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092)]),
    ("PLAINTEXT://:9092", [Listener("PLAINTEXT", "PLAINTEXT", "", 9092)]),
    ("PLAINTEXT://0.0.0.0:0", [Listener("PLAINTEXT", "PLAINTEXT", "0.0.0.0", 0)]),
    ("PLAINTEXT://[::1]:9092", [Listener("PLAINTEXT", "PLAINTEXT", "::1", 9092)]),
    ("plaintext://broker-1.example.com:9092", [Listener("PLAINTEXT", "PLAINTEXT", "broker-1.example.com", 9092)]),
    (
        "PLAINTEXT://:9092, SSL://:9093",
        [Listener("PLAINTEXT", "PLAINTEXT", "", 9092), Listener("SSL", "SSL", "", 9093)],
    ),
]


@pytest.mark.parametrize("text, expected", LISTENER_TABLE)
def test_listeners_parse_to_name_protocol_host_port(text: str, expected: list[Listener]) -> None:
    assert list(config(listeners=text).listeners) == expected


def test_custom_listener_names_resolve_through_the_protocol_map() -> None:
    loaded = BrokerConfig.from_properties(
        {
            "listeners": "INTERNAL://:9092,EXTERNAL://:9093",
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
            "inter.broker.listener.name": "internal",
        }
    )
    assert [(l.name, l.security_protocol) for l in loaded.listeners] == [
        ("INTERNAL", "PLAINTEXT"),
        ("EXTERNAL", "SASL_SSL"),
    ]
    assert loaded.inter_broker_listener_name == "INTERNAL"


def test_listener_printing_round_trips_ipv6() -> None:
    assert str(Listener("PLAINTEXT", "PLAINTEXT", "::1", 9092)) == "PLAINTEXT://[::1]:9092"


def test_advertised_listeners_override_the_bind_address() -> None:
    loaded = BrokerConfig.from_properties(
        {"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://broker1:9092"}
    )
    assert loaded.advertised_listeners == (Listener("PLAINTEXT", "PLAINTEXT", "broker1", 9092),)


def test_several_named_plaintext_listeners_with_their_advertised_endpoints() -> None:
    loaded = BrokerConfig.from_properties({
        "listeners": "CLIENT://0.0.0.0:9092,REPLICATION://10.0.0.1:9093",
        "advertised.listeners": "CLIENT://broker1.example.com:9092,REPLICATION://10.0.0.1:19093",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
        "inter.broker.listener.name": "REPLICATION",
    })
    assert loaded.listeners == (
        Listener("CLIENT", "PLAINTEXT", "0.0.0.0", 9092), Listener("REPLICATION", "PLAINTEXT", "10.0.0.1", 9093),
    )
    assert loaded.advertised_listeners == (
        Listener("CLIENT", "PLAINTEXT", "broker1.example.com", 9092),
        Listener("REPLICATION", "PLAINTEXT", "10.0.0.1", 19093),
    )
    assert loaded.inter_broker_listener_name == "REPLICATION"


def test_the_inter_broker_listener_defaults_to_the_first() -> None:
    loaded = BrokerConfig.from_properties({
        "listeners": "CLIENT://:9092,REPLICATION://:9093",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
    })
    assert loaded.inter_broker_listener_name == "CLIENT"


_TWO = {
    "listeners": "CLIENT://:9092,REPLICATION://:9093",
    "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
}


LISTENER_ERRORS = [
    ({**_TWO, "inter.broker.listener.name": "INTERNAL"}, "inter.broker.listener.name", "not one of the listeners"),
    ({**_TWO, "listeners": "CLIENT://:9092,client://:9093"}, "listeners", "CLIENT appears more than once"),
    ({**_TWO, "advertised.listeners": "CLIENT://h:1,CLIENT://h:2"}, "advertised.listeners", "appears more than once"),
    ({**_TWO, "advertised.listeners": "OTHER://h:1"}, "advertised.listeners", "no security protocol"),
    ({**_TWO, "listener.security.protocol.map": "CLIENT:PLAINTEXT"}, "listeners", "REPLICATION has no security"),
    (
        {**_TWO, "advertised.listeners": "CLIENT://h:1", "inter.broker.listener.name": "REPLICATION"},
        "advertised.listeners", "does not advertise the inter-broker listener REPLICATION",
    ),
    ({**_TWO, "advertised.listeners": "REPLICATION://h:1"}, "advertised.listeners", "inter-broker listener CLIENT"),
    ({"listeners": "127.0.0.1:9092"}, "listeners", "is not NAME://host:port"),
    ({"listeners": "PLAINTEXT://host:99999"}, "listeners", "above 65535"),
    ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"}, "listeners", "appears more than once"),
    ({"listeners": "PLAINTEXT://:9092,SSL://:9092"}, "listeners", "port 9092 is used by more than one"),
    ({"listeners": ""}, "listeners", "at least one listener"),
    ({"listeners": "CUSTOM://:9092"}, "listeners", "no security protocol"),
    ({"listener.security.protocol.map": "PLAINTEXT:TLS"}, "listener.security.protocol.map", "must be one of"),
    ({"listener.security.protocol.map": "PLAINTEXT"}, "listener.security.protocol.map", "LISTENER_NAME:SECURITY_PROTOCOL"),
    ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "advertised.listeners", "wildcard host"),
    ({"advertised.listeners": "SSL://host:9093"}, "advertised.listeners", "not one of the listeners"),
    ({"inter.broker.listener.name": "REPLICATION"}, "inter.broker.listener.name", "not one of the listeners"),
]


@pytest.mark.parametrize("props, key, message", LISTENER_ERRORS)
def test_listener_errors_name_the_key(props: dict[str, str], key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        BrokerConfig.from_properties(props)
    assert info.value.key == key
    assert "\n" not in str(info.value)


# --- value errors ----------------------------------------------------------------------


VALUE_ERRORS = [
    ("log.segment.bytes", "abc", "expected a 32-bit integer, at least 14"),
    ("log.segment.bytes", "13", "expected a 32-bit integer, at least 14"),
    ("log.segment.bytes", "3000000000", "expected a 32-bit integer"),
    ("log.segment.bytes", "1_000", "expected a 32-bit integer"),
    ("log.retention.ms", "1.5", "expected a 64-bit integer"),
    ("log.retention.ms", "", "expected a 64-bit integer"),
    ("offsets.topic.replication.factor", "40000", "expected a 16-bit integer"),
    ("auto.create.topics.enable", "yes", "expected a boolean"),
    ("log.cleaner.min.cleanable.ratio", "1.5", "between 0.0 and 1.0"),
    ("log.cleaner.min.cleanable.ratio", "nan", "expected a decimal number"),
    ("log.cleanup.policy", "delete,shred", "element 'shred' is not allowed"),
    ("log.cleanup.policy", "delete,delete", "appears twice"),
    ("log.cleanup.policy", "", "must not be empty"),
    ("log.message.timestamp.type", "createtime", "one of CreateTime, LogAppendTime"),
    ("compression.type", "brotli", "one of uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("num.io.threads", "0", "at least 1"),
    ("log.dirs", "/a,,/b", "empty list element"),
]


@pytest.mark.parametrize("key, value, message", VALUE_ERRORS)
def test_malformed_values_name_key_value_and_expectation(tmp_path: Path, key: str, value: str, message: str) -> None:
    path = write(tmp_path, f"# first line\n{key}={value}\n")
    with pytest.raises(ConfigError) as info:
        load_broker_config(path)
    error = info.value
    assert (error.key, error.value, error.path, error.line) == (key, value, path, 2)
    assert message in str(error)
    assert str(error).startswith(f"{path}:2: {key}={value}: ")


def test_malformed_override_names_the_override() -> None:
    with pytest.raises(ConfigError) as info:
        load_broker_config(None, ["num.partitions=many"])
    assert str(info.value) == "--override: num.partitions=many: expected a 32-bit integer, at least 1"


@pytest.mark.parametrize("text", ["num.partitions", "=3", "  =3"])
def test_override_without_key_and_value_is_rejected(text: str) -> None:
    with pytest.raises(ConfigError, match="is not key=value"):
        load_broker_config(None, [text])


def test_unknown_key_in_file_names_file_line_and_close_match(tmp_path: Path) -> None:
    path = write(tmp_path, "num.partitions=1\nlog.segment.byte=1024\n")
    with pytest.raises(ConfigError) as info:
        load_broker_config(path)
    assert info.value.key == "log.segment.byte"
    assert info.value.line == 2
    assert str(info.value) == f"{path}:2: log.segment.byte=1024: unknown broker property (did you mean 'log.segment.bytes'?)"


def test_unknown_key_without_close_match_has_no_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        load_broker_config(None, ["process.roles=broker"])
    assert str(info.value) == "--override: process.roles=broker: unknown broker property"


def test_missing_config_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent.properties"
    with pytest.raises(ConfigError, match="not found") as info:
        load_broker_config(missing)
    assert info.value.path == missing


def test_group_session_timeout_bounds_must_be_ordered() -> None:
    with pytest.raises(ConfigError, match="exceeds group.max.session.timeout.ms"):
        BrokerConfig.from_properties({"group.min.session.timeout.ms": "10000", "group.max.session.timeout.ms": "5000"})


# --- access -------------------------------------------------------------------------------


def test_typed_getters_refuse_the_wrong_type() -> None:
    defaults = BrokerConfig.from_properties()
    with pytest.raises(TypeError, match="is a boolean"):
        defaults.get_int("auto.create.topics.enable")
    with pytest.raises(LookupError, match="unset"):
        defaults.get_int("log.retention.ms")
    assert defaults.get_optional_int("log.retention.ms") is None


def test_unknown_name_lookup_suggests_the_known_one() -> None:
    with pytest.raises(KeyError, match="num.io.threads"):
        BrokerConfig.from_properties().get("num.io.thread")


def test_describe_reports_source_per_property() -> None:
    described = config(num_partitions="3").describe()
    assert described["num.partitions"] == ("3", ConfigSource.STATIC_BROKER_CONFIG)
    assert described["num.io.threads"] == ("8", ConfigSource.DEFAULT_CONFIG)
    assert described["log.retention.ms"] == (None, ConfigSource.DEFAULT_CONFIG)
    assert set(described) == set(BROKER_PROPERTIES)


def test_config_is_immutable() -> None:
    loaded = BrokerConfig.from_properties()
    with pytest.raises(TypeError):
        loaded.values["num.partitions"] = 9  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(BROKER_PROPERTIES))
def test_every_property_has_a_doc_line(name: str) -> None:
    doc = BROKER_PROPERTIES[name].doc
    assert doc and doc.endswith(".") and "\n" not in doc

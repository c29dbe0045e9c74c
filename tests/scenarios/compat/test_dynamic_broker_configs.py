"""Dynamic broker configs through confluent-kafka's AdminClient and kafka-configs.sh, as on a Kafka broker.

Each test has a broker of its own: the configs it changes outlive the test.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from concurrent.futures import Future
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)

from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

TIMEOUT = 15.0
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def broker(tmp_path: Path):
    process = BrokerProcess(tmp_path / "broker", overrides={"broker.id": "3", "log.retention.hours": "5"}).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def settle(future: Future) -> object:
    return future.result(timeout=TIMEOUT)


def set_broker_configs(admin: AdminClient, name: str, **configs: str) -> Future:
    entries = [ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
               for k, v in configs.items()]
    (future,) = admin.incremental_alter_configs([ConfigResource(ConfigResource.Type.BROKER, name,
                                                                incremental_configs=entries)]).values()
    return future


def describe(admin: AdminClient, resource_type: ConfigResource.Type, name: str) -> dict:
    (future,) = admin.describe_configs([ConfigResource(resource_type, name)]).values()
    return settle(future)


def test_a_dynamic_config_is_described_with_its_source_and_synonyms(admin: AdminClient) -> None:
    settle(set_broker_configs(admin, "3", log_retention_ms="3600000"))

    entry = describe(admin, ConfigResource.Type.BROKER, "3")["log.retention.ms"]

    assert (entry.value, ConfigSource(entry.source)) == ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert not entry.is_read_only
    # confluent-kafka keeps one synonym per name
    assert list(entry.synonyms) == ["log.retention.ms", "log.retention.hours"]


def test_a_static_config_is_read_only_and_refused(admin: AdminClient) -> None:
    assert describe(admin, ConfigResource.Type.BROKER, "3")["log.dirs"].is_read_only

    with pytest.raises(KafkaException) as failure:
        settle(set_broker_configs(admin, "3", num_partitions="7"))

    error = failure.value.args[0]
    assert error.code() == KafkaError.INVALID_CONFIG
    assert "Cannot update these configs dynamically: num.partitions" in error.str()


def segment_files(broker: BrokerProcess, topic: str) -> list[Path]:
    return sorted((broker.log_dir / f"{topic}-0").glob("*.log"))


def produce(broker: BrokerProcess, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "batch.size": 200})
    for i in range(count):
        producer.produce(topic, value=b"x" * 300, key=str(i).encode())
        producer.flush(TIMEOUT)


def test_a_new_log_default_applies_to_running_topics_at_once(admin: AdminClient, broker: BrokerProcess) -> None:
    topic = f"dyn-{uuid.uuid4().hex[:8]}"
    settle(admin.create_topics([NewTopic(topic, 1, 1)])[topic])
    produce(broker, topic, 3)
    assert len(segment_files(broker, topic)) == 1

    settle(set_broker_configs(admin, "3", log_segment_bytes="1024"))
    produce(broker, topic, 12)

    assert len(segment_files(broker, topic)) >= 3
    topic_entry = describe(admin, ConfigResource.Type.TOPIC, topic)["segment.bytes"]
    assert (topic_entry.value, ConfigSource(topic_entry.source)) == ("1024", ConfigSource.DYNAMIC_BROKER_CONFIG)


def test_dynamic_configs_are_in_force_after_a_restart(admin: AdminClient, broker: BrokerProcess) -> None:
    settle(set_broker_configs(admin, "3", log_retention_ms="3600000"))
    broker.restart()

    restarted = AdminClient({"bootstrap.servers": broker.bootstrap})
    entry = describe(restarted, ConfigResource.Type.BROKER, "3")["log.retention.ms"]
    assert (entry.value, ConfigSource(entry.source)) == ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG)


def kafka_configs(broker: BrokerProcess, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / "bin" / "kafka-configs.sh"), "--bootstrap-server", broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})


def test_kafka_configs_alters_and_describes_a_broker(broker: BrokerProcess) -> None:
    altered = kafka_configs(broker, "--entity-type", "brokers", "--entity-name", "3", "--alter",
                            "--add-config", "log.retention.ms=3600000,max.connections=500")
    assert altered.returncode == 0, altered.stderr
    assert "Completed updating config for broker 3." in altered.stdout

    deadline = time.monotonic() + 10
    described = kafka_configs(broker, "--entity-type", "brokers", "--entity-name", "3", "--describe")
    while "log.retention.ms" not in described.stdout and time.monotonic() < deadline:
        time.sleep(0.2)
        described = kafka_configs(broker, "--entity-type", "brokers", "--entity-name", "3", "--describe")
    assert "Dynamic configs for broker 3 are:" in described.stdout
    assert "log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3600000" in (
        described.stdout)
    assert "max.connections=500" in described.stdout

    defaults = kafka_configs(broker, "--entity-type", "brokers", "--entity-default", "--alter",
                             "--add-config", "log.segment.bytes=2097152")
    assert defaults.returncode == 0, defaults.stderr
    assert "Completed updating default config for brokers in the cluster." in defaults.stdout
    described = kafka_configs(broker, "--entity-type", "brokers", "--entity-default", "--describe")
    assert described.stdout.splitlines() == [
        "Default configs for brokers in the cluster are:",
        "  log.segment.bytes=2097152 sensitive=false"
        " synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2097152}",
    ]

    refused = kafka_configs(broker, "--entity-type", "brokers", "--entity-default", "--alter",
                            "--add-config", "log.dirs=/elsewhere")
    assert refused.returncode != 0
    assert "Cannot update these configs dynamically" in refused.stdout + refused.stderr

"""The spate sink writes and the source reads a topic over SASL_SSL (SCRAM-SHA-512) on a real secured broker,
with Spark's Kafka option names; a wrong password fails the query with the broker's refusal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scenarios.security.secure_broker import BOB, SecureBroker, secure_broker
from tests.support.admin_requests import create_topic
from tests.support.broker_process import running_broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    broker = secure_broker(tmp_path_factory.mktemp("spark-secure"))
    with running_broker(broker.process):
        yield broker


def security_options(secure: SecureBroker, password: str = BOB[1]) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": secure.address("SASL_SSL"),
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                  f'username="{BOB[0]}" password="{password}";',
        "kafka.ssl.truststore.location": str(secure.certs.ca),
    }


def test_the_sink_writes_and_the_source_reads_over_sasl_ssl(spark, secure: SecureBroker, unique) -> None:
    topic = unique("secure")
    assert create_topic(secure.address("PLAINTEXT"), topic, partitions=2, replication_factor=1).error_code == 0
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(20)], ["key", "value"])
    rows.write.format("spate").mode("append").options(**security_options(secure)).option("topic", topic).save()

    read = spark.read.format("spate").options(**security_options(secure)).option("subscribe", topic).load()
    values = sorted(bytes(r.value).decode() for r in read.select("value").collect())
    assert values == sorted(f"v{i}" for i in range(20))


def test_an_exactly_once_write_commits_its_transactions_over_sasl_ssl(spark, secure: SecureBroker, unique) -> None:
    # The driver ends the tasks' transactions itself: its clients must log in as the tasks' producers do.
    topic = unique("secure-eos")
    assert create_topic(secure.address("PLAINTEXT"), topic, partitions=2, replication_factor=1).error_code == 0
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(20)], ["key", "value"])
    (rows.write.format("spate").mode("append").options(**security_options(secure)).option("topic", topic)
     .option("deliveryGuarantee", "exactly_once").save())

    read = (spark.read.format("spate").options(**security_options(secure)).option("subscribe", topic)
            .option("kafka.isolation.level", "read_committed").load())
    values = sorted(bytes(r.value).decode() for r in read.select("value").collect())
    assert values == sorted(f"v{i}" for i in range(20))


def test_a_wrong_password_fails_the_read_with_the_refusal(spark, secure: SecureBroker, unique) -> None:
    read = spark.read.format("spate").options(**security_options(secure, "wrong")).option("subscribe", "any")
    with pytest.raises(Exception, match="(?i)authentication"):
        read.load().collect()

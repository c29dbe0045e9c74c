"""``kafka-acls.sh`` against a broker with an authorizer: ACLs added, listed and removed in Kafka's output.

The tool connects over PLAINTEXT as ``User:ANONYMOUS``, which the broker
names a super user so that it may manage ACLs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.spate.cli.kafka_tools.conftest import TOOLS_BROKER_OVERRIDES, run_tool
from tests.support.broker_process import BrokerProcess, running_broker

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    overrides = {**TOOLS_BROKER_OVERRIDES, "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                 "super.users": "User:ANONYMOUS"}
    with running_broker(BrokerProcess(data_dir=tmp_path_factory.mktemp("acls"), overrides=overrides)) as running:
        yield running


def acls(broker: BrokerProcess, *args: str):
    return run_tool("kafka-acls.sh", "--bootstrap-server", broker.bootstrap, *args)


def test_an_acl_added_is_printed_and_listed_in_kafkas_format(secured: BrokerProcess, topic: str) -> None:
    added = acls(secured, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", topic)
    assert added.returncode == 0, added
    resource = f"`ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)`"
    assert f"Adding ACLs for resource {resource}: " in added.stdout
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in added.stdout
    assert f"Current ACLs for resource {resource}: " in added.stdout

    listed = acls(secured, "--list", "--topic", topic)
    assert listed.returncode == 0, listed
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed.stdout


def test_the_producer_and_consumer_conveniences_grant_kafkas_sets(secured: BrokerProcess, topic: str) -> None:
    group = f"group-{topic}"
    assert acls(secured, "--add", "--allow-principal", "User:bob", "--producer", "--topic", topic,
                "--idempotent").returncode == 0
    assert acls(secured, "--add", "--allow-principal", "User:bob", "--consumer", "--topic", topic,
                "--group", group).returncode == 0
    on_topic = acls(secured, "--list", "--topic", topic).stdout
    assert {op for op in ("WRITE", "DESCRIBE", "CREATE", "READ") if f"operation={op}," in on_topic} == \
        {"WRITE", "DESCRIBE", "CREATE", "READ"}
    assert "operation=READ" in acls(secured, "--list", "--group", group).stdout
    assert "operation=IDEMPOTENT_WRITE" in acls(secured, "--list", "--cluster").stdout


def test_removed_acls_are_gone(secured: BrokerProcess, topic: str) -> None:
    grant = ("--allow-principal", "User:carol", "--operation", "Write", "--topic", topic)
    assert acls(secured, "--add", *grant).returncode == 0
    removed = acls(secured, "--remove", "--force", *grant)
    assert removed.returncode == 0, removed
    assert "Removing ACLs for resource" in removed.stdout
    assert "User:carol" not in acls(secured, "--list", "--topic", topic).stdout


def test_a_bad_operation_is_named(secured: BrokerProcess, topic: str) -> None:
    result = acls(secured, "--add", "--allow-principal", "User:alice", "--operation", "Fly", "--topic", topic)
    assert result.returncode == 1
    assert "Fly is not a valid operation" in result.stderr

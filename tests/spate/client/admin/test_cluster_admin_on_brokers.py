"""The cluster calls of the admin client against real brokers (Spate, and Tansu as the oracle).

A single broker is a cluster of one: it describes itself as the controller
and has nothing to reassign. Calls a broker does not serve yet raise
UnsupportedApiError; the tests of those calls skip there, saying so, and run
by themselves once the broker serves them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from spate.client import Admin, AlterConfigOp, ConfigResource, NewTopic, UnsupportedApiError
from tests.spate.client.conftest import CLIENT_TIMEOUT_MS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def admin(broker):
    with Admin(broker.bootstrap, default_api_timeout_ms=CLIENT_TIMEOUT_MS) as client:
        yield client


@contextlib.contextmanager
def served(api: str) -> Iterator[None]:
    """Skip the test if the broker does not serve ``api`` (yet)."""
    try:
        yield
    except UnsupportedApiError as exc:
        pytest.skip(f"the broker does not serve {api}: {exc}")


def test_describe_cluster_names_the_one_broker_as_controller(broker, admin) -> None:
    described = admin.describe_cluster()
    assert described.cluster_id
    assert [b.port for b in described.brokers] == [broker.process.port]
    assert described.controller is not None and described.controller.node_id == described.brokers[0].node_id


def test_incremental_alter_configs_sets_then_deletes_one_key_and_keeps_the_others(broker, admin, topic_name) -> None:
    name = topic_name()
    admin.create_topics(NewTopic(name, 1, 1, configs={"retention.ms": "3600000"}))
    resource = ConfigResource.topic(name)
    with served("IncrementalAlterConfigs"):
        admin.incremental_alter_configs({resource: [AlterConfigOp("segment.ms", "7200000")]})
    configs = admin.describe_configs(resource)[resource]
    assert configs["segment.ms"].value == "7200000"
    assert configs["retention.ms"].value == "3600000", "keys not named keep their values"
    admin.incremental_alter_configs({resource: [AlterConfigOp("segment.ms", op="delete")]})
    configs = admin.describe_configs(resource)[resource]
    assert "segment.ms" not in configs or configs["segment.ms"].value != "7200000"  # Tansu drops the key
    assert configs["retention.ms"].value == "3600000"


def test_a_single_broker_lists_no_reassignment_in_progress(broker, admin) -> None:
    broker.skip_on_tansu("ListPartitionReassignments lists every partition, moving or not")
    with served("ListPartitionReassignments"):
        assert admin.list_partition_reassignments() == {}

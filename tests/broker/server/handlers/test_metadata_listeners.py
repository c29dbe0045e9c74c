"""The Metadata handler on a listener: brokers named by that listener's endpoints, leaders without it named so."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from broker_core.server.handlers import metadata
from broker_core.server.metadata_answer_cache import MetadataAnswerCache
from broker_core.server.metadata_cache import MetadataCache
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataRequest, MetadataResponse
from tests.support.controller_requests import Broker, FakeController, PartitionSpec

BROKERS = [
    Broker(1, "repl1", 19091, listener="REPLICATION", more_listeners=(("CLIENT", "client1", 9091),)),
    Broker(2, "repl2", 19092, listener="REPLICATION"),  # reached by brokers only
]


def answer(listener: str, version: int):
    cache = MetadataCache(cluster_id="c", listener_name="REPLICATION")
    body = FakeController(controller_id=1).update_metadata(BROKERS, [
        PartitionSpec("orders", 0, 1, replicas=(1, 2)), PartitionSpec("orders", 1, 2, replicas=(2, 1)),
    ])
    cache.update_metadata(body)
    ctx = SimpleNamespace(metadata=cache.for_listener(listener), admin=None, listener_name=listener,
                          metadata_answers=MetadataAnswerCache())
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="orders")],
                              allow_auto_topic_creation=False)
    response = metadata.handle(ctx, Request(header=None, body=request, api_key=ApiKey.METADATA, api_version=version,
                                            size=0))
    return MetadataResponse.decode(response.encode(version), version)  # topic entries come encoded


@pytest.mark.parametrize("version, error", [(5, ErrorCode.LEADER_NOT_AVAILABLE), (6, ErrorCode.LISTENER_NOT_FOUND),
                                            (8, ErrorCode.LISTENER_NOT_FOUND)])
def test_a_leader_without_the_listener_asked_is_not_named(version: int, error: ErrorCode) -> None:
    response = answer("CLIENT", version)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(1, "client1", 9091)]
    (topic,) = response.topics
    by_index = {p.partition_index: p for p in topic.partitions}
    assert (by_index[0].error_code, by_index[0].leader_id) == (ErrorCode.NONE, 1)
    assert (by_index[1].error_code, by_index[1].leader_id) == (error, -1)


def test_on_the_listener_every_broker_has_every_leader_is_named() -> None:
    response = answer("REPLICATION", 8)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(1, "repl1", 19091), (2, "repl2", 19092)]
    assert [(p.error_code, p.leader_id) for p in response.topics[0].partitions] == [(0, 1), (0, 2)]

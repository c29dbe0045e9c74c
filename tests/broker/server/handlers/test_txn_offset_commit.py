"""The TxnOffsetCommit handler: wire fields in, one error per partition out, in every served version."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from broker_core.cluster.errors import UnknownTopicError
from broker_core.server.handlers import txn_offset_commit
from broker_core.server.purgatory import FetchPurgatory
from broker_core.storage.files import TopicPartition
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from tests.broker.coordinator.group.group_harness import Harness

E = ErrorCode
Q = TxnOffsetCommitRequest
VERSIONS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class _Topic:
    partitions: tuple[int, ...]


class _Metadata:
    def __init__(self, **topics: int) -> None:
        self._topics = {name: _Topic(tuple(range(count))) for name, count in topics.items()}

    def get_topic(self, name: str) -> _Topic:
        if name not in self._topics:
            raise UnknownTopicError(name)
        return self._topics[name]


def _request(version: int, topics: dict[str, list[tuple[int, int, int, str | None]]], *, epoch: int = 1) -> Request:
    body = Q(
        transactional_id="copier",
        group_id="g",
        producer_id=4000,
        producer_epoch=epoch,
        topics=[
            Q.TxnOffsetCommitRequestTopic(
                name=name,
                partitions=[
                    Q.TxnOffsetCommitRequestPartition(
                        partition_index=p, committed_offset=o, committed_leader_epoch=le, committed_metadata=m
                    )
                    for p, o, le, m in partitions
                ],
            )
            for name, partitions in topics.items()
        ],
    )
    # Through the wire format, so each version's fields are what the handler really gets.
    decoded = Q.decode(body.encode(version), version)
    return Request(header=None, body=decoded, api_key=ApiKey.TXN_OFFSET_COMMIT, api_version=version, size=0)


def _errors(response, version: int) -> dict[TopicPartition, ErrorCode]:
    decoded = TxnOffsetCommitResponse.decode(response.encode(version), version)
    return {
        TopicPartition(t.name, p.partition_index): ErrorCode(p.error_code) for t in decoded.topics for p in t.partitions
    }


class _ReplicatedAtOnce:
    """A single-replica ``__consumer_offsets`` partition: every write is replicated as soon as it lands."""

    log_end_offset = 0

    @staticmethod
    def check_enough_replicas_reach_offset(offset: int) -> tuple[bool, ErrorCode]:
        return True, ErrorCode.NONE


def _context(harness: Harness) -> SimpleNamespace:
    replicas = SimpleNamespace(get=lambda topic, partition: _ReplicatedAtOnce(), is_offline=lambda topic, partition: False,
                               purgatory=FetchPurgatory())
    return SimpleNamespace(metadata=_Metadata(orders=2), group_coordinator=harness.coordinator, replicas=replicas,
                           config=SimpleNamespace(get_int=lambda name: 5_000))


def _handle(ctx: SimpleNamespace, request: Request):
    return asyncio.run(txn_offset_commit.handle(ctx, request))


@pytest.mark.parametrize("version", VERSIONS)
def test_known_partitions_are_committed_and_unknown_ones_refused(version: int) -> None:
    h = Harness()
    request = _request(version, {"orders": [(0, 10, 3, "m"), (5, 1, -1, None)], "missing": [(0, 1, -1, "")]})
    errors = _errors(_handle(_context(h), request), version)
    assert errors == {
        TopicPartition("orders", 0): E.NONE,
        TopicPartition("orders", 5): E.UNKNOWN_TOPIC_OR_PARTITION,
        TopicPartition("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    (pending,) = h.group().pending_txn_offsets[4000].values()
    # The leader epoch travels from version 2 on.
    assert (pending.offset, pending.leader_epoch, pending.metadata) == (10, 3 if version >= 2 else -1, "m")


def test_the_transactional_fields_reach_the_verifier() -> None:
    calls = []
    h = Harness(txn_verifier=lambda *args: calls.append(args) or E.NONE)
    _handle(_context(h), _request(2, {"orders": [(1, 5, -1, "")]}, epoch=7))
    assert calls == [("copier", 4000, 7, "g")]


@pytest.mark.parametrize(("version", "expected"), [(0, E.INVALID_PRODUCER_EPOCH), (1, E.INVALID_PRODUCER_EPOCH),
                                                   (2, E.PRODUCER_FENCED)])
def test_a_fenced_producer_is_told_in_the_code_its_version_knows(version: int, expected: ErrorCode) -> None:
    h = Harness(txn_verifier=lambda *args: E.PRODUCER_FENCED)
    errors = _errors(_handle(_context(h), _request(version, {"orders": [(0, 5, -1, "")]})), version)
    assert errors == {TopicPartition("orders", 0): expected}


def test_without_a_group_coordinator_every_known_partition_gets_coordinator_not_available() -> None:
    ctx = SimpleNamespace(metadata=_Metadata(orders=2), group_coordinator=None)
    errors = _errors(_handle(ctx, _request(0, {"orders": [(0, 5, -1, "")]})), 0)
    assert errors == {TopicPartition("orders", 0): E.COORDINATOR_NOT_AVAILABLE}

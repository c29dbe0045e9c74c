"""How TransactionOffsetsWriter treats each coordinator answer, against a scripted network (no broker)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from spate.client import ErrorCode, KafkaTimeoutError, NetworkError, TopicPartition
from spate.client.net.retry import Backoff
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.transaction_offsets import (
    TransactionOffsetsError,
    TransactionOffsetsWriter,
)
from spate.protocol import ApiKey

E = ErrorCode
TXN = OpenTransaction("sink-0", 7, 2)
OFFSETS = {TopicPartition("in", 0): 12, TopicPartition("in", 1): 8}


def coordinator(node: int = 1, code: ErrorCode = E.NONE) -> Any:
    return SimpleNamespace(error_code=int(code), error_message=None, node_id=node, host="h", port=9000 + node)


def added(code: ErrorCode = E.NONE) -> Any:
    return SimpleNamespace(error_code=int(code))


def offsets_committed(codes: dict[int, ErrorCode]) -> Any:
    parts = [SimpleNamespace(partition_index=p, error_code=int(c)) for p, c in codes.items()]
    return SimpleNamespace(topics=[SimpleNamespace(name="in", partitions=parts)])


class ScriptedNetwork:
    """Answers each request with the next scripted answer for its API; an exception is raised instead."""

    def __init__(self, clock: FakeClock, script: dict[ApiKey, list[Any]]) -> None:
        self.clock = clock
        self.script = {key: list(answers) for key, answers in script.items()}
        self.sent: list[tuple[int, ApiKey, Any]] = []
        self.backoff = Backoff(100, 1_000, random.Random(1))
        self.metadata = SimpleNamespace(request_update=lambda: None)
        self.registered: dict[int, tuple[str, int]] = {}

    def least_loaded_node(self, now: float) -> int:
        return -1

    def node(self, node_id: int) -> Any:
        return self.registered.get(node_id)

    def register_node(self, node_id: int, host: str, port: int) -> None:
        self.registered[node_id] = (host, port)

    def request(self, node: int, api_key: ApiKey, body: Any, **_: Any) -> tuple[int, Any]:
        self.sent.append((node, api_key, body))
        self.clock.now += 0.001
        answer = self.script[api_key].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return 0, answer

    def close(self) -> None:
        pass

    def apis(self) -> list[str]:
        return [api.name for _, api, _ in self.sent]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def run(script: dict[ApiKey, list[Any]], timeout_ms: float = 10_000) -> ScriptedNetwork:
    clock = FakeClock()
    network = ScriptedNetwork(clock, script)
    writer = TransactionOffsetsWriter("h:1", clock=clock, sleep=clock.sleep, network=network)  # type: ignore[arg-type]
    writer.add_offsets(TXN, "G", OFFSETS, timeout_ms=timeout_ms)
    return network


def test_add_offsets_then_commits_them_to_the_group_coordinator_under_the_handed_over_identity() -> None:
    network = run({
        ApiKey.FIND_COORDINATOR: [coordinator(1), coordinator(2)],
        ApiKey.ADD_OFFSETS_TO_TXN: [added()],
        ApiKey.TXN_OFFSET_COMMIT: [offsets_committed({0: E.NONE, 1: E.NONE})],
    })
    assert network.apis() == ["FIND_COORDINATOR", "ADD_OFFSETS_TO_TXN", "FIND_COORDINATOR", "TXN_OFFSET_COMMIT"]
    (_, _, find_txn), (add_node, _, add), (_, _, find_group), (commit_node, _, commit) = network.sent
    assert (find_txn.key, find_txn.key_type, find_group.key, find_group.key_type) == ("sink-0", 1, "G", 0)
    assert add_node == 1
    assert (add.transactional_id, add.producer_id, add.producer_epoch, add.group_id) == ("sink-0", 7, 2, "G")
    assert (commit_node, commit.producer_id, commit.producer_epoch, commit.group_id) == (2, 7, 2, "G")
    assert {(t.name, p.partition_index, p.committed_offset) for t in commit.topics for p in t.partitions} == {
        ("in", 0, 12), ("in", 1, 8)
    }


def test_loading_busy_and_moved_coordinators_are_retried() -> None:
    network = run({
        ApiKey.FIND_COORDINATOR: [coordinator(1), coordinator(3), coordinator(1), coordinator(2)],
        ApiKey.ADD_OFFSETS_TO_TXN: [
            added(E.COORDINATOR_LOAD_IN_PROGRESS), added(E.CONCURRENT_TRANSACTIONS), added(E.NOT_COORDINATOR),
            NetworkError("lost"), added(),
        ],
        ApiKey.TXN_OFFSET_COMMIT: [
            offsets_committed({0: E.COORDINATOR_LOAD_IN_PROGRESS, 1: E.NONE}),
            offsets_committed({0: E.NONE}),
        ],
    })
    assert network.apis().count("ADD_OFFSETS_TO_TXN") == 5
    assert network.apis().count("TXN_OFFSET_COMMIT") == 2
    # NOT_COORDINATOR and the lost connection look the transaction coordinator up again.
    assert network.apis()[:8] == [
        "FIND_COORDINATOR", "ADD_OFFSETS_TO_TXN", "ADD_OFFSETS_TO_TXN", "ADD_OFFSETS_TO_TXN",
        "FIND_COORDINATOR", "ADD_OFFSETS_TO_TXN", "FIND_COORDINATOR", "ADD_OFFSETS_TO_TXN",
    ]
    assert [node for node, api, _ in network.sent if api is ApiKey.ADD_OFFSETS_TO_TXN] == [1, 1, 1, 3, 1]
    retried_partitions = network.sent[-1][2].topics[0].partitions
    assert [p.partition_index for p in retried_partitions] == [0]


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ({ApiKey.FIND_COORDINATOR: [coordinator(1)], ApiKey.ADD_OFFSETS_TO_TXN: [added(E.PRODUCER_FENCED)]},
         E.PRODUCER_FENCED),
        ({ApiKey.FIND_COORDINATOR: [coordinator(1)], ApiKey.ADD_OFFSETS_TO_TXN: [added(E.INVALID_TXN_STATE)]},
         E.INVALID_TXN_STATE),
        ({ApiKey.FIND_COORDINATOR: [coordinator(1)],
          ApiKey.ADD_OFFSETS_TO_TXN: [added(E.GROUP_AUTHORIZATION_FAILED)]}, E.GROUP_AUTHORIZATION_FAILED),
        ({ApiKey.FIND_COORDINATOR: [coordinator(1), coordinator(2)], ApiKey.ADD_OFFSETS_TO_TXN: [added()],
          ApiKey.TXN_OFFSET_COMMIT: [offsets_committed({0: E.NONE, 1: E.INVALID_PRODUCER_EPOCH})]},
         E.INVALID_PRODUCER_EPOCH),
        ({ApiKey.FIND_COORDINATOR: [coordinator(1, E.GROUP_AUTHORIZATION_FAILED)]}, E.GROUP_AUTHORIZATION_FAILED),
    ],
    ids=["fenced", "invalid-state", "group-authorization", "commit-fenced", "find-refused"],
)
def test_other_answers_raise_a_typed_refusal_with_the_coordinators_code(script, code) -> None:
    with pytest.raises(TransactionOffsetsError) as info:
        run(script)
    assert info.value.code == code
    assert info.value.transaction == TXN and info.value.group_id == "G"
    assert not info.value.retriable


def test_a_coordinator_that_stays_busy_times_out_naming_its_last_answer() -> None:
    with pytest.raises(KafkaTimeoutError, match="COORDINATOR_LOAD_IN_PROGRESS"):
        run({
            ApiKey.FIND_COORDINATOR: [coordinator(1)],
            ApiKey.ADD_OFFSETS_TO_TXN: [added(E.COORDINATOR_LOAD_IN_PROGRESS)] * 1_000,
        }, timeout_ms=2_000)

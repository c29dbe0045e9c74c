"""Finding a group's or a transactional id's coordinator, against a scripted network."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from spate.client.net.find_coordinator import CoordinatorKey, find_coordinator
from spate.protocol import ApiKey, ErrorCode, KafkaError


class ScriptedNetwork:
    """Knows broker 1 from the start and broker ``late`` once metadata is fetched; answers FindCoordinator."""

    def __init__(self, answer: Any, *, late: int | None = None, reachable: bool = True) -> None:
        self.answer = answer
        self.known = {1}
        self.late = late
        self.reachable = reachable
        self.sent: list[tuple[int, Any, int | None]] = []
        self.metadata_fetches = 0

    def any_node(self) -> int:
        if not self.reachable:
            raise KafkaError(ErrorCode.NETWORK_EXCEPTION, "no broker reachable")
        return 1

    def request(self, node: int, api_key: ApiKey, body: Any, *, deadline: float, min_version: int | None = None):
        assert api_key == ApiKey.FIND_COORDINATOR
        self.sent.append((node, body, min_version))
        return 1, self.answer

    def node(self, node_id: int) -> Any:
        return object() if node_id in self.known else None

    def fetch_metadata(self, topics: Any, *, deadline: float) -> None:
        self.metadata_fetches += 1
        if self.late is not None:
            self.known.add(self.late)


def answer(node: int = 1, code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(error_code=int(code), error_message=message, node_id=node, host="h", port=9092)


def test_a_group_coordinator_is_asked_of_any_broker_by_key_and_type() -> None:
    network = ScriptedNetwork(answer(node=1))
    assert find_coordinator(network, CoordinatorKey.group("g"), 10.0) == 1  # type: ignore[arg-type]
    (node, body, min_version), = network.sent
    assert (node, body.key, body.key_type, min_version) == (1, "g", 0, None)


def test_a_transaction_coordinator_needs_a_version_with_key_types() -> None:
    network = ScriptedNetwork(answer(node=1))
    find_coordinator(network, CoordinatorKey.transaction("tx"), 10.0)  # type: ignore[arg-type]
    (_, body, min_version), = network.sent
    assert (body.key, body.key_type, min_version) == ("tx", 1, 1)


def test_a_coordinator_missing_from_the_metadata_is_looked_up_in_fresh_metadata() -> None:
    network = ScriptedNetwork(answer(node=4), late=4)
    assert find_coordinator(network, CoordinatorKey.group("g"), 10.0) == 4  # type: ignore[arg-type]
    assert network.metadata_fetches == 1


@pytest.mark.parametrize(
    ("key", "network", "code", "message"),
    [
        (CoordinatorKey.group("g"), ScriptedNetwork(answer(code=ErrorCode.COORDINATOR_NOT_AVAILABLE)),
         ErrorCode.COORDINATOR_NOT_AVAILABLE, "find the coordinator of group 'g'"),
        (CoordinatorKey.transaction("tx"), ScriptedNetwork(answer(code=ErrorCode.COORDINATOR_NOT_AVAILABLE)),
         ErrorCode.COORDINATOR_NOT_AVAILABLE, "find the coordinator of 'tx'"),
        (CoordinatorKey.group("g"), ScriptedNetwork(answer(node=7)),
         ErrorCode.COORDINATOR_NOT_AVAILABLE, "coordinator 7 of group 'g' is not in the cluster metadata"),
        (CoordinatorKey.transaction("tx"), ScriptedNetwork(answer(), reachable=False),
         ErrorCode.NETWORK_EXCEPTION, "no broker reachable"),
    ],
    ids=["refused-group", "refused-transaction", "unknown-node", "no-broker"],
)
def test_no_coordinator_is_a_retriable_error_that_says_whose(key, network, code, message) -> None:
    with pytest.raises(KafkaError) as raised:
        find_coordinator(network, key, 10.0)
    assert raised.value.code == code and raised.value.retriable
    assert message in str(raised.value)

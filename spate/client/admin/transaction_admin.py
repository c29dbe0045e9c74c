"""Transaction administration (KIP-664): the requests behind ``Admin``'s transaction methods.

DescribeProducers goes to each partition's leader, DescribeTransactions to
each transactional id's coordinator, and ListTransactions to every broker
(each lists the ids it coordinates). Coordinator moves and missing leaders
are retried until the deadline; other errors are reported per key in an
:class:`~spate.client.errors.AdminError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from spate.client.net.find_coordinator import CoordinatorKey, find_coordinator
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.describe_producers import DescribeProducersRequest
from spate.protocol.messages.describe_transactions import DescribeTransactionsRequest
from spate.protocol.messages.list_transactions import ListTransactionsRequest
from spate.structs import TopicPartition, group_by_topic


@dataclass(frozen=True)
class ProducerState:
    """A producer a partition remembers; ``current_txn_start_offset`` is -1 without an open transaction."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionDescription:
    """A transactional id as its coordinator holds it; ``start_time_ms`` is -1 without an open transaction."""

    transactional_id: str
    coordinator: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int
    partitions: tuple[TopicPartition, ...]


class TransactionAdmin:
    """The transaction half of the admin client; ``retrier`` is the admin's way of retrying."""

    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def describe_producers(
        self, partitions: Iterable[TopicPartition], deadline: float
    ) -> dict[TopicPartition, list[ProducerState]]:
        call: KeyedCall[TopicPartition] = KeyedCall({tp: tp for tp in partitions})

        def attempt(deadline: float) -> None:
            snapshot = self._network.fetch_metadata({tp.topic for tp in call.pending}, deadline=deadline)
            by_leader, leaderless = snapshot.by_leader(call.pending)
            for tp in leaderless:
                count = snapshot.partition_count(tp.topic)
                if count is None or tp.partition >= count:
                    call.fail(tp, KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"describe producers of {tp}"))
                else:
                    call.retry(KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {tp}"))
            for node, led in by_leader.items():
                self._describe_producers_on(node, led, call, deadline)

        return self._retrier.call_each("describe_producers", call, attempt, deadline).results

    def _describe_producers_on(
        self, node: int, partitions: list[TopicPartition], call: KeyedCall[TopicPartition], deadline: float
    ) -> None:
        Q = DescribeProducersRequest
        by_topic = group_by_topic(partitions, value=lambda tp: tp.partition)
        body = Q(topics=[Q.TopicRequest(name=name, partition_indexes=indexes) for name, indexes in by_topic.items()])
        _, response = self._network.request(node, ApiKey.DESCRIBE_PRODUCERS, body, deadline=deadline)
        for topic in response.topics:
            for part in topic.partitions:
                tp = TopicPartition(topic.name, part.partition_index)
                code = ErrorCode.of(part.error_code)
                if tp not in call:
                    continue
                if code == ErrorCode.NONE:
                    call.succeed(tp, [ProducerState(p.producer_id, p.producer_epoch, p.last_sequence, p.last_timestamp,
                                                    p.coordinator_epoch, p.current_txn_start_offset)
                                      for p in part.active_producers])
                elif code.retriable:
                    call.retry(KafkaError(code, f"describe producers of {tp}"))
                else:
                    call.fail(tp, KafkaError(code, part.error_message or f"describe producers of {tp}"))

    def describe_transactions(
        self, transactional_ids: Iterable[str], deadline: float
    ) -> dict[str, TransactionDescription]:
        call: KeyedCall[str] = KeyedCall({tid: tid for tid in transactional_ids})

        def attempt(deadline: float) -> None:
            for transactional_id in list(call.pending):
                node = find_coordinator(self._network, CoordinatorKey.transaction(transactional_id), deadline)
                body = DescribeTransactionsRequest(transactional_ids=[transactional_id])
                _, response = self._network.request(node, ApiKey.DESCRIBE_TRANSACTIONS, body, deadline=deadline)
                state = response.transaction_states[0]
                code = ErrorCode.of(state.error_code)
                if code == ErrorCode.NONE:
                    partitions = tuple(TopicPartition(t.topic, p) for t in state.topics for p in t.partitions)
                    call.succeed(transactional_id, TransactionDescription(
                        transactional_id, node, state.transaction_state, state.producer_id, state.producer_epoch,
                        state.transaction_timeout_ms, state.transaction_start_time_ms, partitions))
                elif code.retriable:
                    call.retry(KafkaError(code, f"describe transaction {transactional_id!r}"))
                else:
                    call.fail(transactional_id, KafkaError(code, f"describe transaction {transactional_id!r}"))

        return self._retrier.call_each("describe_transactions", call, attempt, deadline).results

    def list_transactions(
        self, deadline: float, *, states: Iterable[str] = (), producer_ids: Iterable[int] = (), duration_ms: int = -1
    ) -> list[TransactionListing]:
        body = ListTransactionsRequest(state_filters=list(states), producer_id_filters=list(producer_ids),
                                       duration_filter=duration_ms)

        def attempt(deadline: float) -> list[TransactionListing]:
            snapshot = self._network.fetch_metadata([], deadline=deadline)
            found: dict[str, TransactionListing] = {}
            min_version = 1 if duration_ms >= 0 else None
            for node in sorted(snapshot.brokers):
                _, response = self._network.request(node, ApiKey.LIST_TRANSACTIONS, body, deadline=deadline,
                                                    min_version=min_version)
                code = ErrorCode.of(response.error_code)
                if code != ErrorCode.NONE:
                    raise KafkaError(code, f"list transactions on broker {node}")
                for txn in response.transaction_states:
                    found[txn.transactional_id] = TransactionListing(txn.transactional_id, txn.producer_id,
                                                                     txn.transaction_state)
            return [found[tid] for tid in sorted(found)]

        return self._retrier.call("list_transactions", attempt, deadline)

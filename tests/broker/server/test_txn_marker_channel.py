"""Markers across brokers: the WriteTxnMarkers channel, and the marker writer that mixes local and remote partitions.

Other brokers are played by :class:`FakeLeader`, an asyncio server that
speaks WriteTxnMarkers v1 through the sans-IO ``ServerConnection`` and
answers each request with the next scripted code (or drops the connection).
Partitions led here are real partitions on a real log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

import pytest

from broker_core.coordinator.scheduler import LoopScheduler
from broker_core.coordinator.transaction import MarkerOutcome, MarkerRequest, TransactionCoordinator, TxnState
from broker_core.coordinator.transaction import TransactionStateManager as StateManager
from broker_core.replication.partition import Partition
from broker_core.server.txn_marker_channel import LeaderEndpoint, TxnMarkerChannel
from broker_core.server.txn_marker_writer import BrokerMarkerWriter
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.protocol import ApiKey, ServerConnection, VersionRange
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.write_txn_markers import WriteTxnMarkersResponse
from spate.records import NO_SEQUENCE, Record, build_batch
from spate.structs import TopicPartition
from tests.broker.coordinator.transaction.txn_harness import CONFIG, MemoryTxnTopic

E = ErrorCode
R = WriteTxnMarkersResponse
DROP = None  # a scripted answer: close the connection without answering
NOW = 1_700_000_000_000
LOCAL = TopicPartition("orders", 0)
REMOTE = TopicPartition("orders", 1)
OFFSETS = TopicPartition("__consumer_offsets", 0)
MARKER = MarkerRequest(producer_id=4000, producer_epoch=2, coordinator_epoch=5, commit=True)


class FakeLeader:
    """Another broker, as far as WriteTxnMarkers goes."""

    def __init__(self, *answers: ErrorCode | None) -> None:
        self.answers = list(answers)
        self.requests: list[Any] = []
        self.connections = 0
        self._server: asyncio.base_events.Server | None = None

    async def start(self, broker_id: int = 2) -> LeaderEndpoint:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return LeaderEndpoint(broker_id, "127.0.0.1", self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        codec = ServerConnection(versions={ApiKey.WRITE_TXN_MARKERS: VersionRange(1, 1)})
        try:
            while data := await reader.read(1 << 16):
                codec.receive_data(data)
                while (request := codec.next_request()) is not None:
                    self.requests.append(request.body)
                    code = self.answers.pop(0) if self.answers else E.NONE
                    if code is DROP:
                        return
                    writer.write(codec.encode_response(request.header.correlation_id, request.api_key,
                                                       request.api_version, _answer(request.body, code)))
                    await writer.drain()
        finally:
            writer.close()

    def marked(self) -> list[tuple[int, int, bool, int, dict[str, list[int]]]]:
        """Every marker received: (producer id, epoch, commit, coordinator epoch, partitions by topic)."""
        return [
            (m.producer_id, m.producer_epoch, m.transaction_result, m.coordinator_epoch,
             {t.name: list(t.partition_indexes) for t in m.topics})
            for body in self.requests for m in body.markers
        ]


def _answer(body: Any, code: ErrorCode) -> Any:
    return R(markers=[
        R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
            R.WritableTxnMarkerTopicResult(name=t.name, partitions=[
                R.WritableTxnMarkerPartitionResult(partition_index=p, error_code=code) for p in t.partition_indexes])
            for t in m.topics])
        for m in body.markers
    ])


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


# --- the channel -----------------------------------------------------------------------------


def test_entries_queued_together_go_out_as_one_request_and_each_gets_its_codes() -> None:
    async def scenario() -> None:
        leader = FakeLeader()
        endpoint = await leader.start()
        channel = TxnMarkerChannel()
        answers: list[dict] = []
        for producer_id in (1, 2, 3):
            marker = MarkerRequest(producer_id, 0, 5, commit=producer_id != 2)
            channel.send(endpoint, marker, [TopicPartition("t", producer_id)], answers.append)
        await until(lambda: len(answers) == 3)
        assert len(leader.requests) == 1
        assert leader.marked() == [(1, 0, True, 5, {"t": [1]}), (2, 0, False, 5, {"t": [2]}),
                                   (3, 0, True, 5, {"t": [3]})]
        assert answers == [{TopicPartition("t", p): E.NONE} for p in (1, 2, 3)]
        await channel.close()
        await leader.stop()

    asyncio.run(scenario())


def test_two_entries_of_one_producer_go_out_in_separate_requests() -> None:
    async def scenario() -> None:
        leader = FakeLeader()
        endpoint = await leader.start()
        channel = TxnMarkerChannel()
        answers: list[dict] = []
        channel.send(endpoint, MARKER, [TopicPartition("t", 0)], answers.append)
        channel.send(endpoint, MARKER, [TopicPartition("t", 1)], answers.append)
        await until(lambda: len(answers) == 2)
        assert len(leader.requests) == 2
        await channel.close()
        await leader.stop()

    asyncio.run(scenario())


def test_partitions_of_one_entry_are_nested_under_their_topics() -> None:
    async def scenario() -> None:
        leader = FakeLeader(E.NOT_LEADER_OR_FOLLOWER)
        endpoint = await leader.start()
        channel = TxnMarkerChannel()
        answers: list[dict] = []
        partitions = [TopicPartition("a", 0), TopicPartition("b", 3), TopicPartition("a", 2)]
        channel.send(endpoint, MARKER, partitions, answers.append)
        await until(lambda: answers)
        assert leader.marked() == [(4000, 2, True, 5, {"a": [0, 2], "b": [3]})]
        assert answers == [{tp: E.NOT_LEADER_OR_FOLLOWER for tp in partitions}]
        await channel.close()
        await leader.stop()

    asyncio.run(scenario())


def test_a_dropped_connection_answers_network_exception_and_the_next_send_reconnects() -> None:
    async def scenario() -> None:
        leader = FakeLeader(DROP)
        endpoint = await leader.start()
        channel = TxnMarkerChannel()
        answers: list[dict] = []
        channel.send(endpoint, MARKER, [REMOTE], answers.append)
        await until(lambda: answers)
        assert answers == [{REMOTE: E.NETWORK_EXCEPTION}]
        channel.send(endpoint, MARKER, [REMOTE], answers.append)
        await until(lambda: len(answers) == 2)
        assert answers[1] == {REMOTE: E.NONE}
        assert leader.connections == 2
        await channel.close()
        await leader.stop()

    asyncio.run(scenario())


def test_an_unreachable_broker_answers_network_exception() -> None:
    async def scenario() -> None:
        leader = FakeLeader()
        endpoint = await leader.start()
        await leader.stop()
        await asyncio.sleep(0.05)
        channel = TxnMarkerChannel()
        answers: list[dict] = []
        channel.send(endpoint, MARKER, [REMOTE], answers.append)
        await until(lambda: answers)
        assert answers == [{REMOTE: E.NETWORK_EXCEPTION}]
        await channel.close()

    asyncio.run(scenario())


def test_a_broker_that_does_not_answer_in_time_answers_network_exception() -> None:
    async def scenario() -> None:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1 << 16)
            await asyncio.sleep(5)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        endpoint = LeaderEndpoint(3, "127.0.0.1", server.sockets[0].getsockname()[1])
        channel = TxnMarkerChannel(request_timeout_ms=200)
        answers: list[dict] = []
        channel.send(endpoint, MARKER, [REMOTE], answers.append)
        await until(lambda: answers, timeout_s=3)
        assert answers == [{REMOTE: E.NETWORK_EXCEPTION}]
        await channel.close()
        server.close()

    asyncio.run(scenario())


# --- the marker writer and the coordinator across brokers ------------------------------------


class _Replicas:
    """This broker (id 1) leads the partitions given."""

    node_id = 1

    def __init__(self, partitions: dict[TopicPartition, Partition]) -> None:
        self.partitions = partitions
        self.notified = 0

    def get(self, topic: str, index: int) -> Partition | None:
        return self.partitions.get(TopicPartition(topic, index))

    def notify_append(self, partition: Partition) -> None:
        self.notified += 1


def _partition(directory: Path, tp: TopicPartition) -> Partition:
    local_log = LocalLog.open(directory / f"{tp.topic}-{tp.partition}", LogConfig(), clock=lambda: NOW)
    return Partition(tp.topic, tp.partition, UnifiedLog(local_log, clock=lambda: NOW,
                                                        producer_id_expiration_ms=86_400_000), leader_epoch=0)


def _open_transaction(partition: Partition, producer_id: int, producer_epoch: int) -> None:
    batch = build_batch([Record(0, NOW, None, b"v")], producer_id=producer_id, producer_epoch=producer_epoch,
                        base_sequence=NO_SEQUENCE if partition.topic.startswith("__") else 0, is_transactional=True)
    partition.append_records(batch)
    assert partition.last_stable_offset < partition.high_watermark


class Cluster:
    """A transaction coordinator on broker 1, its local partitions, and leaders elsewhere."""

    def __init__(self, tmp_path: Path, leaders: dict[TopicPartition, LeaderEndpoint | None],
                 exists: Callable[[TopicPartition], bool] = lambda tp: True) -> None:
        self.local = {tp: _partition(tmp_path, tp) for tp in (LOCAL, OFFSETS)}
        self.replicas = _Replicas(self.local)
        self.leaders = leaders
        self.offsets_markers: list[tuple[int, int, bool]] = []
        self.channel = TxnMarkerChannel()
        writer = BrokerMarkerWriter(
            replicas=self.replicas, partition_exists=exists, leader_of=lambda tp: self.leaders.get(tp),
            channel=self.channel, on_offsets_marker=lambda *marker: self.offsets_markers.append(marker),
            clock=lambda: NOW,
        )
        self.coordinator = TransactionCoordinator(
            CONFIG, StateManager(MemoryTxnTopic(), partitions=CONFIG.state_log_partitions), writer,
            LoopScheduler(asyncio.get_running_loop(), lambda: NOW),
            next_producer_id=lambda: 4000, partition_exists=exists,
            offsets_partition_for=lambda group: OFFSETS,
        )
        self.coordinator.startup()

    def begin(self, *partitions: TopicPartition, group: str | None = None) -> tuple[int, int]:
        result = self.coordinator.init_producer_id("txn", 60_000)
        producer = result.producer_id, result.producer_epoch
        errors = self.coordinator.add_partitions("txn", *producer, partitions)
        assert set(errors.values()) == {E.NONE}, errors
        if group is not None:
            assert self.coordinator.add_offsets("txn", *producer, group) is E.NONE
        for tp in [*partitions, *([OFFSETS] if group else [])]:
            if tp in self.local:
                _open_transaction(self.local[tp], *producer)
        return producer

    def state(self) -> TxnState:
        return self.coordinator.describe("txn").state

    async def close(self) -> None:
        self.coordinator.shutdown()
        await self.channel.close()


def test_markers_go_to_local_partitions_directly_and_to_remote_leaders_until_one_accepts(tmp_path: Path) -> None:
    async def scenario() -> None:
        leader = FakeLeader(E.NOT_LEADER_OR_FOLLOWER, E.NONE)
        cluster = Cluster(tmp_path, {REMOTE: await leader.start()})
        producer = cluster.begin(LOCAL, REMOTE, group="copier")
        assert cluster.coordinator.end_transaction("txn", *producer, True) is E.NONE
        await until(lambda: cluster.state() is TxnState.COMPLETE_COMMIT)
        # Coordinator epoch 0: the leader epoch of the __transaction_state partition at start-up.
        assert leader.marked() == [(producer[0], producer[1], True, 0, {"orders": [1]})] * 2
        for partition in cluster.local.values():
            assert partition.last_stable_offset == partition.high_watermark
        assert cluster.offsets_markers == [(0, producer[0], True)]
        await cluster.close()
        await leader.stop()

    asyncio.run(scenario())


def test_a_partition_whose_leader_moves_gets_its_marker_from_the_new_leader(tmp_path: Path) -> None:
    async def scenario() -> None:
        old, new = FakeLeader(E.NOT_LEADER_OR_FOLLOWER), FakeLeader()
        cluster = Cluster(tmp_path, {REMOTE: await old.start(2)})
        new_endpoint = await new.start(3)
        producer = cluster.begin(REMOTE)
        cluster.coordinator.end_transaction("txn", *producer, False)
        await until(lambda: len(old.requests) == 1)
        cluster.leaders[REMOTE] = new_endpoint
        await until(lambda: cluster.state() is TxnState.COMPLETE_ABORT)
        assert [m[2] for m in new.marked()] == [False]
        await cluster.close()
        await old.stop()
        await new.stop()

    asyncio.run(scenario())


def test_a_partition_without_a_leader_is_retried_until_it_has_one(tmp_path: Path) -> None:
    async def scenario() -> None:
        leader = FakeLeader()
        endpoint = await leader.start()
        cluster = Cluster(tmp_path, {REMOTE: None})
        producer = cluster.begin(LOCAL, REMOTE)
        cluster.coordinator.end_transaction("txn", *producer, True)
        await asyncio.sleep(0.3)
        assert cluster.state() is TxnState.PREPARE_COMMIT and leader.requests == []
        assert cluster.local[LOCAL].last_stable_offset == cluster.local[LOCAL].high_watermark
        cluster.leaders[REMOTE] = endpoint
        await until(lambda: cluster.state() is TxnState.COMPLETE_COMMIT)
        # The local marker is not written again on the retries.
        assert cluster.local[LOCAL].high_watermark == 2
        await cluster.close()
        await leader.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("code", [E.INVALID_PRODUCER_EPOCH, E.TRANSACTION_COORDINATOR_FENCED])
def test_a_partition_already_past_the_transaction_needs_no_marker(tmp_path: Path, code: ErrorCode) -> None:
    async def scenario() -> None:
        leader = FakeLeader(code)
        cluster = Cluster(tmp_path, {REMOTE: await leader.start()})
        producer = cluster.begin(REMOTE)
        cluster.coordinator.end_transaction("txn", *producer, True)
        await until(lambda: cluster.state() is TxnState.COMPLETE_COMMIT)
        assert len(leader.requests) == 1
        await cluster.close()
        await leader.stop()

    asyncio.run(scenario())


def test_a_partition_that_no_longer_exists_needs_no_marker(tmp_path: Path) -> None:
    async def scenario() -> None:
        leader = FakeLeader(E.UNKNOWN_TOPIC_OR_PARTITION)
        deleted: set[TopicPartition] = set()
        cluster = Cluster(tmp_path, {REMOTE: await leader.start()}, exists=lambda tp: tp not in deleted)
        producer = cluster.begin(REMOTE)
        cluster.coordinator.end_transaction("txn", *producer, True)
        await until(lambda: len(leader.requests) == 1)
        deleted.add(REMOTE)
        await until(lambda: cluster.state() is TxnState.COMPLETE_COMMIT)
        assert len(leader.requests) == 1
        await cluster.close()
        await leader.stop()

    asyncio.run(scenario())


def test_the_writer_alone_reports_local_and_remote_outcomes_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        leader = FakeLeader(E.NOT_LEADER_OR_FOLLOWER)
        endpoint = await leader.start()
        channel = TxnMarkerChannel()
        local = _partition(tmp_path, LOCAL)
        writer = BrokerMarkerWriter(replicas=_Replicas({LOCAL: local}), partition_exists=lambda tp: True,
                                    leader_of={REMOTE: endpoint}.get, channel=channel,
                                    on_offsets_marker=lambda *marker: None, clock=lambda: NOW)
        outcomes: list[MarkerOutcome] = []
        elsewhere = TopicPartition("orders", 2)  # no leader known
        writer.write_markers(MARKER, [LOCAL, REMOTE, elsewhere], outcomes.append)
        assert outcomes == []  # the remote answer is still out
        await until(lambda: outcomes)
        await asyncio.sleep(0.05)
        assert outcomes == [MarkerOutcome(written={LOCAL}, retry={REMOTE, elsewhere})]
        await channel.close()
        await leader.stop()

    asyncio.run(scenario())

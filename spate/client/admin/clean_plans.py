"""Sending compaction plans to partition leaders, and asking them how far their logs are clean.

::

    with CleanPlanClient("broker1:9092") as plans:
        state = plans.describe([TopicPartition("changelog", 0)])[TopicPartition("changelog", 0)]
        outcome = plans.apply(state, {md5(key): offset, ...})

Speaks Spate's CleanPlan request (API key 1000) to the leader of each
partition, so it works from any host that reaches the brokers. A plan is
the offset of every key's latest record in ``[first_dirty_offset,
dirty_end)``, keys named by their 16-byte MD5; it travels in chunks of
``chunk_entries`` entries, and ``apply`` returns once the leader applied it.
A plan the leader refuses raises :class:`KafkaError`: OFFSET_OUT_OF_RANGE
(stale: the log moved on), FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER
(leadership changed), REQUEST_TIMED_OUT (still being applied); the caller
describes the partition again and plans anew.

Every replica takes plans, not only the leader (each cleans its own log):
``describe_replicas`` asks each replica how far its log is clean and
``apply_to_replicas`` sends one plan to several replicas at once, chunk by
chunk, and reports each replica's outcome or refusal.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence, Union

from spate.client.admin.admin_config import AdminConfig
from spate.client.errors import ClientError, KafkaTimeoutError
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.clean_plan import DESCRIBE_ONLY, ENTRY_SIZE, CleanPlanRequest
from spate.structs import TopicPartition, group_by_topic

DEFAULT_CHUNK_ENTRIES = 65_536  # 1.5 MiB a chunk
DEFAULT_APPLY_TIMEOUT_MS = 600_000
_Req = CleanPlanRequest


@dataclass(frozen=True)
class LogCleaningState:
    """A partition's log as its leader describes it for compaction."""

    tp: TopicPartition
    leader: int
    leader_epoch: int
    log_start_offset: int
    high_watermark: int
    first_dirty_offset: int  # the cleaner checkpoint: a plan starts here
    clean_end_offset: int  # a plan may reach up to here (a segment boundary)
    size_bytes: int
    dirty_bytes: int
    due: bool
    planner: str
    replica: int = -1  # the broker whose log this describes (-1: the leader's)

    @property
    def node(self) -> int:
        """The broker that described this log, to which a plan for it goes."""
        return self.replica if self.replica >= 0 else self.leader

    @property
    def cleanable(self) -> bool:
        return 0 <= self.first_dirty_offset < self.clean_end_offset


ReplicaOutcome = Union["PlanOutcome", KafkaError]


@dataclass(frozen=True)
class PlanOutcome:
    state: LogCleaningState  # after the plan was applied
    records_read: int
    records_kept: int
    bytes_read: int
    bytes_written: int


class CleanPlanClient:
    def __init__(self, bootstrap_servers: str | Sequence[str], **options: Any) -> None:
        config = AdminConfig.from_options("CleanPlanClient", options)
        self._timeout = config.default_api_timeout
        self._network = NetworkClient(bootstrap_servers, config)

    def describe(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, LogCleaningState]:
        """Each partition's log as its leader sees it; raises KafkaError for a partition none can describe."""
        wanted = list(partitions)
        deadline = time.monotonic() + self._timeout
        snapshot = self._network.fetch_metadata({tp.topic for tp in wanted}, deadline=deadline)
        by_leader, leaderless = snapshot.by_leader(wanted)
        if leaderless:
            raise KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {', '.join(map(str, leaderless))}")
        states: dict[TopicPartition, LogCleaningState] = {}
        for node, tps in by_leader.items():
            body = _Req(timeout_ms=0, topics=[
                _Req.CleanPlanTopic(name=topic, partitions=parts)
                for topic, parts in group_by_topic(tps, value=lambda tp: _describe_only(tp.partition)).items()
            ])
            _, response = self._network.request(node, ApiKey.SPATE_CLEAN_PLAN, body, deadline=deadline)
            for tp, answer in _answers(response):
                _raise_for(tp, answer, "describe")
                states[tp] = _state(tp, node, answer, node)
        return states

    def describe_replicas(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, dict[int, LogCleaningState | KafkaError]]:
        """Each partition's log as each of its replicas sees it (a replica that cannot answer: its error)."""
        wanted = list(partitions)
        deadline = time.monotonic() + self._timeout
        snapshot = self._network.fetch_metadata({tp.topic for tp in wanted}, deadline=deadline)
        by_node: dict[int, list[TopicPartition]] = {}
        found: dict[TopicPartition, dict[int, LogCleaningState | KafkaError]] = {tp: {} for tp in wanted}
        for tp in wanted:
            topic = snapshot.topics.get(tp.topic)
            if topic is None or tp.partition >= len(topic.partitions):
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown partition {tp}")
            for node in topic.partitions[tp.partition].replicas:
                by_node.setdefault(node, []).append(tp)
        for node, tps in by_node.items():
            body = _Req(timeout_ms=0, topics=[
                _Req.CleanPlanTopic(name=topic, partitions=parts)
                for topic, parts in group_by_topic(tps, value=lambda tp: _describe_only(tp.partition)).items()
            ])
            try:
                _, response = self._network.request(node, ApiKey.SPATE_CLEAN_PLAN, body, deadline=deadline)
            except (ClientError, KafkaError) as exc:
                for tp in tps:
                    found[tp][node] = _as_kafka_error(exc, f"broker {node} did not describe {tp}")
                continue
            for tp, answer in _answers(response):
                try:
                    _raise_for(tp, answer, "describe")
                except KafkaError as exc:
                    found[tp][node] = exc
                    continue
                found[tp][node] = _state(tp, snapshot.leader(tp.topic, tp.partition), answer, node)
        return found

    def apply(
        self,
        state: LogCleaningState,
        entries: Mapping[bytes, int] | Iterable[tuple[bytes, int]],
        *,
        dirty_start: int | None = None,
        dirty_end: int | None = None,
        chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
        timeout_ms: int = DEFAULT_APPLY_TIMEOUT_MS,
    ) -> PlanOutcome:
        """Send the plan for ``[dirty_start, dirty_end)`` (default ``state.first_dirty_offset`` and
        ``state.clean_end_offset``) to the broker ``state`` describes, chunk by chunk as ``entries`` yields
        them; wait until it is applied. Raises KafkaError when it is refused."""
        outcome = self.apply_to_replicas([state], entries, dirty_start=dirty_start, dirty_end=dirty_end,
                                         chunk_entries=chunk_entries, timeout_ms=timeout_ms)[state.node]
        if isinstance(outcome, KafkaError):
            raise outcome
        return outcome

    def apply_to_replicas(
        self,
        states: Sequence[LogCleaningState],
        entries: Mapping[bytes, int] | Iterable[tuple[bytes, int]],
        *,
        dirty_start: int | None = None,
        dirty_end: int | None = None,
        chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
        timeout_ms: int = DEFAULT_APPLY_TIMEOUT_MS,
    ) -> dict[int, ReplicaOutcome]:
        """Send one plan to the replicas ``states`` describe (one per broker, the same partition), each chunk
        to all of them; the last one makes them apply it, side by side. Each replica's outcome, or its
        refusal as a KafkaError (a replica that refused a chunk gets no more)."""
        if not states:
            return {}
        first = states[0]
        start = first.first_dirty_offset if dirty_start is None else dirty_start
        end = first.clean_end_offset if dirty_end is None else dirty_end
        plan_id = uuid.uuid4().hex
        pairs = iter(entries.items() if isinstance(entries, Mapping) else entries)
        piece = pack_entries(itertools.islice(pairs, max(1, chunk_entries)))
        outcomes: dict[int, ReplicaOutcome] = {}
        number = 0
        while True:
            following = pack_entries(itertools.islice(pairs, max(1, chunk_entries))) if piece else b""
            last = not following
            chunk = _Chunk(plan_id, number, last, start, end, piece)
            sent = [(state, self._send_chunk(state, chunk, timeout_ms if last else 0))
                    for state in states if state.node not in outcomes]
            for state, request in sent:
                outcome = self._answer_of(state, request)
                if isinstance(outcome, KafkaError) or last:
                    outcomes[state.node] = outcome
            if last or len(outcomes) == len(states):
                return outcomes
            piece, number = following, number + 1

    def _send_chunk(self, state: LogCleaningState, chunk: _Chunk, wait_ms: int) -> Any:
        tp = state.tp
        part = _Req.CleanPlanPartition(
            partition_index=tp.partition, current_leader_epoch=state.leader_epoch, plan_id=chunk.plan_id,
            chunk=chunk.number, last_chunk=chunk.last, dirty_start=chunk.start, dirty_end=chunk.end,
            entries=chunk.entries,
        )
        body = _Req(timeout_ms=wait_ms, topics=[_Req.CleanPlanTopic(name=tp.topic, partitions=[part])])
        try:
            return self._network.send(state.node, ApiKey.SPATE_CLEAN_PLAN, body, timeout=self._timeout + wait_ms / 1000)
        except (ClientError, KafkaError) as exc:
            return _as_kafka_error(exc, f"cannot send a compaction plan for {tp} to broker {state.node}")

    def _answer_of(self, state: LogCleaningState, request: Any) -> ReplicaOutcome:
        if isinstance(request, KafkaError):
            return request
        tp = state.tp
        try:
            while not request.done:
                self._network.poll(max(0.0, request.deadline - time.monotonic()))
            (_, answer), = _answers(request.result())
            _raise_for(tp, answer, "apply a compaction plan to")
        except KafkaError as exc:
            return exc
        except ClientError as exc:
            return _as_kafka_error(exc, f"broker {state.node} did not answer the compaction plan for {tp}")
        return PlanOutcome(_state(tp, state.leader, answer, state.node), answer.records_read, answer.records_kept,
                           answer.bytes_read, answer.bytes_written)

    def close(self) -> None:
        self._network.close()

    def __enter__(self) -> CleanPlanClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


@dataclass(frozen=True)
class _Chunk:
    plan_id: str
    number: int
    last: bool
    start: int
    end: int
    entries: bytes


def _as_kafka_error(exc: Exception, what: str) -> KafkaError:
    if isinstance(exc, KafkaError):
        return exc
    code = ErrorCode.REQUEST_TIMED_OUT if isinstance(exc, KafkaTimeoutError) else ErrorCode.NETWORK_EXCEPTION
    return KafkaError(code, f"{what}: {exc}")


def pack_entries(entries: Mapping[bytes, int] | Iterable[tuple[bytes, int]]) -> bytes:
    """``(16-byte key hash, offset)`` pairs as the CleanPlan request carries them."""
    pairs = entries.items() if isinstance(entries, Mapping) else entries
    out = bytearray()
    for key_hash, offset in pairs:
        if len(key_hash) != ENTRY_SIZE - 8:
            raise ValueError(f"a key hash has {ENTRY_SIZE - 8} bytes, not {len(key_hash)}")
        out += key_hash
        out += int(offset).to_bytes(8, "big", signed=True)
    return bytes(out)


def _describe_only(partition: int) -> Any:
    return _Req.CleanPlanPartition(partition_index=partition, current_leader_epoch=-1, plan_id="",
                                   chunk=DESCRIBE_ONLY, last_chunk=False, dirty_start=-1, dirty_end=-1, entries=b"")


def _answers(response: Any) -> list[tuple[TopicPartition, Any]]:
    return [(TopicPartition(t.name, p.partition_index), p) for t in response.topics for p in t.partitions]


def _raise_for(tp: TopicPartition, answer: Any, what: str) -> None:
    if answer.error_code != ErrorCode.NONE:
        raise KafkaError(answer.error_code, f"cannot {what} {tp}: {answer.error_message or 'no reason given'}")


def _state(tp: TopicPartition, leader: int, a: Any, replica: int = -1) -> LogCleaningState:
    return LogCleaningState(tp, leader, a.leader_epoch, a.log_start_offset, a.high_watermark, a.first_dirty_offset,
                            a.clean_end_offset, a.size_bytes, a.dirty_bytes, a.due, a.planner, replica)

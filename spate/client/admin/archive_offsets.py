"""Asking partition leaders how far a topic's Delta archive must reach, and telling every replica how far it does.

::

    with ArchiveOffsetsClient("broker1:9092") as archive:
        states = archive.describe(archive.partitions("orders"))
        ...copy [start, state.archive_target_offset) of each partition into the table...
        archive.record({TopicPartition("orders", 0): 1200})

Speaks Spate's ArchiveOffsets request (API key 1001). ``describe`` asks each
partition's leader; ``record`` tells the leader first (which checks the
offset against its high watermark; a refusal raises :class:`KafkaError`) and
then every other replica, so that whichever becomes leader keeps refusing
to delete unarchived segments. A follower that cannot take it now (it lags,
or is down) is reported in the result and learns it on the next run; until
then it only follows its leader's log start offset.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from spate.client.admin.admin_config import AdminConfig
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.archive_offsets import DESCRIBE_ONLY, NO_OFFSET, ArchiveOffsetsRequest
from spate.structs import TopicPartition, group_by_topic

_Req = ArchiveOffsetsRequest


@dataclass(frozen=True)
class PartitionArchiveState:
    """A partition as its leader describes it for archiving."""

    tp: TopicPartition
    leader: int
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int
    archived_offset: int | None  # None: no archive run reported to the leader yet
    archive_target_offset: int  # retention would delete below here (at most the last stable offset)
    archive_path: str | None

    @property
    def archive_lag(self) -> int:
        """Records retention wants to delete but keeps because they are not archived yet."""
        archived = max(self.archived_offset or 0, self.log_start_offset)
        return max(0, self.archive_target_offset - archived)


@dataclass(frozen=True)
class RecordOutcome:
    recorded: dict[TopicPartition, int]  # what each leader recorded
    follower_failures: dict[tuple[TopicPartition, int], str]  # (partition, broker) -> why it did not take it


class ArchiveOffsetsClient:
    def __init__(self, bootstrap_servers: str | Sequence[str], **options: Any) -> None:
        config = AdminConfig.from_options("ArchiveOffsetsClient", options)
        self._timeout = config.default_api_timeout
        self._network = NetworkClient(bootstrap_servers, config)

    def partitions(self, topic: str) -> list[TopicPartition]:
        """The topic's partitions; raises KafkaError(UNKNOWN_TOPIC_OR_PARTITION) for a topic the cluster lacks."""
        snapshot = self._network.fetch_metadata({topic}, deadline=time.monotonic() + self._timeout)
        count = snapshot.partition_count(topic)
        if not count:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {topic!r}")
        return [TopicPartition(topic, p) for p in range(count)]

    def describe(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionArchiveState]:
        """Each partition as its leader sees it; raises KafkaError for a partition no leader describes."""
        wanted = list(partitions)
        deadline = time.monotonic() + self._timeout
        snapshot = self._network.fetch_metadata({tp.topic for tp in wanted}, deadline=deadline)
        by_leader, leaderless = snapshot.by_leader(wanted)
        if leaderless:
            raise KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {', '.join(map(str, leaderless))}")
        states: dict[TopicPartition, PartitionArchiveState] = {}
        for node, tps in by_leader.items():
            for tp, answer in self._send(node, {tp: DESCRIBE_ONLY for tp in tps}, deadline):
                _raise_for(tp, answer, "describe")
                states[tp] = _state(tp, node, answer)
        return states

    def record(self, offsets: Mapping[TopicPartition, int]) -> RecordOutcome:
        """Tell every replica that each partition is archived below its offset; leaders must accept."""
        deadline = time.monotonic() + self._timeout
        snapshot = self._network.fetch_metadata({tp.topic for tp in offsets}, deadline=deadline)
        by_leader, leaderless = snapshot.by_leader(offsets)
        if leaderless:
            raise KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {', '.join(map(str, leaderless))}")
        recorded: dict[TopicPartition, int] = {}
        for node, tps in by_leader.items():
            for tp, answer in self._send(node, {tp: offsets[tp] for tp in tps}, deadline):
                _raise_for(tp, answer, "record the archived offset of")
                recorded[tp] = answer.archived_offset
        failures: dict[tuple[TopicPartition, int], str] = {}
        for node, tps in _followers(snapshot, offsets).items():
            try:
                answers = self._send(node, {tp: offsets[tp] for tp in tps}, deadline)
            except (KafkaError, OSError) as exc:
                failures.update({(tp, node): str(exc) for tp in tps})
                continue
            for tp, answer in answers:
                if answer.error_code != ErrorCode.NONE:
                    failures[(tp, node)] = answer.error_message or ErrorCode.of(answer.error_code).name
        return RecordOutcome(recorded, failures)

    def _send(
        self, node: int, offsets: Mapping[TopicPartition, int], deadline: float
    ) -> list[tuple[TopicPartition, Any]]:
        body = _Req(topics=[
            _Req.ArchiveOffsetsTopic(name=topic, partitions=parts)
            for topic, parts in group_by_topic(offsets, value=lambda tp: _Req.ArchiveOffsetsPartition(
                partition_index=tp.partition, archived_offset=offsets[tp])).items()
        ])
        _, response = self._network.request(node, ApiKey.SPATE_ARCHIVE_OFFSETS, body, deadline=deadline)
        return [(TopicPartition(t.name, p.partition_index), p) for t in response.topics for p in t.partitions]

    def close(self) -> None:
        self._network.close()

    def __enter__(self) -> ArchiveOffsetsClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def _followers(snapshot: Any, tps: Iterable[TopicPartition]) -> dict[int, list[TopicPartition]]:
    followers: dict[int, list[TopicPartition]] = {}
    for tp in tps:
        description = snapshot.topics.get(tp.topic)
        if description is None or not 0 <= tp.partition < len(description.partitions):
            continue
        part = description.partitions[tp.partition]
        for replica in part.replicas:
            if replica != part.leader:
                followers.setdefault(replica, []).append(tp)
    return followers


def _raise_for(tp: TopicPartition, answer: Any, what: str) -> None:
    if answer.error_code != ErrorCode.NONE:
        raise KafkaError(answer.error_code, f"cannot {what} {tp}: {answer.error_message or 'no reason given'}")


def _state(tp: TopicPartition, leader: int, a: Any) -> PartitionArchiveState:
    return PartitionArchiveState(
        tp, leader, a.log_start_offset, a.high_watermark, a.last_stable_offset,
        None if a.archived_offset == NO_OFFSET else a.archived_offset, a.archive_target_offset, a.archive_path,
    )

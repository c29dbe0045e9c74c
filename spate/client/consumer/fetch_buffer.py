"""Fetched data waiting to be handed out (Kafka's ``FetchBuffer``), per partition.

The fetcher buffers the batches of a partition's answer here, checked but not
decoded; ``drain_records``/``drain_batches``/``drain_raw_batches`` hand them
out in order and advance the partition's position past what they returned. A
partition with buffered data is not fetched again until its buffer is empty.

A batch that fails to decode drops what is buffered for its partition and
leaves a CORRUPT_MESSAGE error for the next poll; the position stays before it.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass

from spate.client.consumer.consumer_record import ConsumerRecord, FetchedBatch, RawBatch
from spate.client.consumer.fetched_records import decode_raw_batch
from spate.client.consumer.subscription_state import SubscriptionState
from spate.protocol import ErrorCode, KafkaError
from spate.records.errors import CorruptRecordError
from spate.structs import TopicPartition


@dataclass(slots=True)
class _Buffered:
    """Batches of one partition not yet handed out.

    ``head`` is the first batch decoded, once records are handed out one by
    one; ``index`` is the next of its records to hand out.
    """

    batches: deque[RawBatch]
    end_offset: int
    head: FetchedBatch | None = None
    index: int = 0


class FetchBuffer:
    def __init__(self, subscriptions: SubscriptionState, errors: deque[BaseException]) -> None:
        self.subscriptions = subscriptions
        # Shared with the fetcher: errors for the application's next poll.
        self._errors = errors
        self._buffers: dict[TopicPartition, _Buffered] = {}

    def __contains__(self, tp: TopicPartition) -> bool:
        return tp in self._buffers

    def __bool__(self) -> bool:
        return bool(self._buffers)

    def add(self, tp: TopicPartition, batches: list[RawBatch], end_offset: int) -> None:
        """Buffer ``batches`` of ``tp``; its position moves to ``end_offset`` once they are all handed out."""
        self._buffers[tp] = _Buffered(deque(batches), end_offset)

    def discard(self, tp: TopicPartition) -> None:
        """Forget buffered data of ``tp`` (after a seek, pause or reassignment)."""
        self._buffers.pop(tp, None)

    def discard_unassigned(self) -> None:
        for tp in list(self._buffers):
            if not self.subscriptions.is_assigned(tp):
                del self._buffers[tp]

    def drain_records(self, max_records: int) -> list[ConsumerRecord]:
        out: list[ConsumerRecord] = []
        for tp in list(self._buffers):
            if len(out) >= max_records:
                break
            buffered = self._buffers[tp]
            state = self.subscriptions.state(tp)
            while buffered.batches and len(out) < max_records:
                batch = self._decoded_head(tp, buffered)
                if batch is None:
                    continue
                start = buffered.index
                stop = min(len(batch), start + max_records - len(out))
                topic, partition, kind, epoch = batch.topic, batch.partition, batch.timestamp_type, batch.leader_epoch
                offsets, timestamps, keys, values, headers = (
                    batch.offsets, batch.timestamps, batch.keys, batch.values, batch.headers,
                )
                out.extend(
                    ConsumerRecord(topic, partition, offsets[i], timestamps[i], kind, keys[i], values[i], headers[i], epoch)
                    for i in range(start, stop)
                )
                if stop == len(batch):
                    buffered.batches.popleft()
                    buffered.head = None
                    buffered.index = 0
                    state.position = batch.next_offset
                else:
                    buffered.index = stop
                    state.position = offsets[stop - 1] + 1
            if tp in self._buffers and not buffered.batches:
                state.position = buffered.end_offset  # past any markers after the last batch
                del self._buffers[tp]
        return out

    def _decoded_head(self, tp: TopicPartition, buffered: _Buffered) -> FetchedBatch | None:
        """The first buffered batch of ``tp``, decoded; None when it had nothing to hand out."""
        if buffered.head is not None:
            return buffered.head
        raw = buffered.batches[0]
        try:
            decoded = decode_raw_batch(raw)
        except CorruptRecordError as exc:
            self._errors.append(corrupt(tp, raw.start_offset, exc))
            buffered.batches.clear()
            del self._buffers[tp]
            return None
        if decoded is None:
            buffered.batches.popleft()
            self.subscriptions.state(tp).position = raw.next_offset
            return None
        buffered.head = decoded
        return decoded

    def drain_batches(self) -> list[FetchedBatch]:
        out: list[FetchedBatch] = []
        for tp in list(self._buffers):
            buffered = self._buffers[tp]
            state = self.subscriptions.state(tp)
            while buffered.batches:
                batch = self._decoded_head(tp, buffered)
                if batch is None:
                    continue
                out.append(_tail(batch, buffered.index) if buffered.index else batch)
                buffered.batches.popleft()
                buffered.head = None
                buffered.index = 0
                state.position = batch.next_offset
            if tp in self._buffers:
                state.position = buffered.end_offset
                del self._buffers[tp]
        return out

    def drain_raw_batches(self) -> list[RawBatch]:
        out: list[RawBatch] = []
        for tp, buffered in self._buffers.items():
            if buffered.head is not None and buffered.index:
                # Records were handed out one by one from the first batch: the rest start after them.
                first = buffered.batches[0]
                start = buffered.head.offsets[buffered.index]
                buffered.batches[0] = dataclasses.replace(first, start_offset=start)
            out.extend(buffered.batches)
            self.subscriptions.state(tp).position = buffered.end_offset
        self._buffers.clear()
        return out


def corrupt(tp: TopicPartition, offset: int, exc: CorruptRecordError) -> KafkaError:
    return KafkaError(ErrorCode.CORRUPT_MESSAGE, f"{tp} at offset {offset}: {exc}")


def _tail(batch: FetchedBatch, start: int) -> FetchedBatch:
    return FetchedBatch(
        batch.topic,
        batch.partition,
        batch.offsets[start:],
        batch.timestamps[start:],
        batch.keys[start:],
        batch.values[start:],
        batch.headers[start:],
        batch.timestamp_type,
        batch.next_offset,
        batch.leader_epoch,
    )

"""An exactly-once copier: consume, transform, produce, in one Kafka transaction.

    python -m tests.scenarios.durability.eos_copier --bootstrap HOST:PORT --input IN --output OUT \\
        --group G --transactional-id T [--commit-records N] [--commit-ms MS] [--exit-when-caught-up]

Records of ``IN`` are copied to ``OUT`` with key and value unchanged (the
output partition follows from the key). The consumer reads at
``read_committed`` in group ``G`` with auto-commit off; every ``N`` records
or ``MS`` milliseconds the copier puts the consumer's positions into the
open transaction (``send_offsets_to_transaction``) and commits it, so the
output records and the input offsets become visible together or not at all.

Crash behaviour: the process may be killed at any instant. A restart with
the same transactional id fences the dead instance and aborts its open
transaction (or finishes its commit if EndTxn had already been accepted);
the consumer then resumes from the group's committed offsets, which are
exactly those of the last committed transaction. The group member is
static (``group.instance.id``), so a restarted copier takes over its
predecessor's partitions without waiting for its session to expire.

On an abortable error the copier aborts, rewinds every assigned partition
to the committed offset and carries on; any other error ends it with a
non-zero status. A transactional call that has not returned long after its
timeout ends the copier with status 75 (``STALLED_EXIT``), for its
supervisor to start it again: librdkafka's ``send_offsets_to_transaction``
can wait forever once the group coordinator it cached has gone away
(librdkafka issues 5456 and 5511, open in 2.16), which a bounced
coordinator does. The next instance fences this one, as after a crash.

Standard output, one line per event, for whoever watches the copier:
``committed <sum of committed input offsets>`` after each commit, and
``caught-up <sum>`` before exiting under ``--exit-when-caught-up``.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from tests.support.faults.copier import STALLED_EXIT

CLIENT_TIMEOUT_S = 30.0
# With no commit for this long, the copier writes its threads' stacks to stderr (again every period).
STALL_REPORT_S = 20.0
# A transactional call still running this long after its timeout is stuck in the client: exit to be restarted.
STALL_GRACE_S = 15.0
# How often, at most, the copier says why it has not caught up yet.
WAIT_REPORT_S = 5.0
# librdkafka debug contexts for both clients (e.g. "eos,cgrp"), to diagnose a run.
DEBUG_ENV = "SPATE_COPIER_DEBUG"
# How long the consumer must have returned nothing before the copier asks whether it has caught up.
IDLE_CHECK_S = 0.3


@dataclass(frozen=True)
class CopierSettings:
    bootstrap: str
    input_topic: str
    output_topic: str
    group: str
    transactional_id: str
    commit_records: int = 2000
    commit_ms: int = 200
    exit_when_caught_up: bool = False
    consume_batch: int = 500


class CopierFailed(RuntimeError):
    """A non-abortable error: the copier cannot go on and must be restarted."""


@dataclass
class Copier:
    settings: CopierSettings
    producer: Producer
    consumer: Consumer
    pending: int = 0
    txn_started_at: float = field(default_factory=time.monotonic)
    # Committed input offset per assigned partition, for the progress lines.
    committed: dict[int, int] = field(default_factory=dict)
    _reported_wait_at: float = 0.0

    @classmethod
    def connect(cls, settings: CopierSettings) -> Copier:
        debug = {"debug": os.environ[DEBUG_ENV]} if os.environ.get(DEBUG_ENV) else {}
        producer = Producer({
            "bootstrap.servers": settings.bootstrap,
            "transactional.id": settings.transactional_id,
            "linger.ms": 5,
            **debug,
        })
        # Fences any earlier instance and settles its open transaction before offsets are read.
        producer.init_transactions(CLIENT_TIMEOUT_S)
        consumer = Consumer({
            "bootstrap.servers": settings.bootstrap,
            "group.id": settings.group,
            "group.instance.id": f"{settings.transactional_id}-member",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 10_000,
            # A partition assigned while another's fetch waits at the log end joins the next fetch sooner.
            "fetch.wait.max.ms": 100,
            **debug,
        })
        copier = cls(settings, producer, consumer)
        consumer.subscribe([settings.input_topic], on_assign=copier._on_assign, on_revoke=copier._on_revoke)
        producer.begin_transaction()
        return copier

    def run(self) -> None:
        idle_since: float | None = None
        while True:
            messages = self.consumer.consume(self.settings.consume_batch, 0.1)
            copied = self._copy(messages)
            if self.pending >= self.settings.commit_records or (
                self.pending and (time.monotonic() - self.txn_started_at) * 1000 >= self.settings.commit_ms
            ):
                self._commit()
            if copied:
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if self.settings.exit_when_caught_up and time.monotonic() - idle_since >= IDLE_CHECK_S:
                if self.pending:
                    self._commit()
                if self._caught_up():
                    emit(f"caught-up {sum(self.committed.values())}")
                    return

    def close(self) -> None:
        self.consumer.close()
        self.producer.flush(CLIENT_TIMEOUT_S)

    def _copy(self, messages: list[Message]) -> int:
        copied = 0
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    continue
                raise CopierFailed(f"consume failed: {error}")
            self._produce(message)
            copied += 1
        self.producer.poll(0)
        return copied

    def _produce(self, message: Message) -> None:
        while True:
            try:
                self.producer.produce(self.settings.output_topic, key=message.key(), value=message.value())
            except BufferError:
                # The local queue is full: let deliveries drain, then try again.
                self.producer.poll(0.05)
                continue
            if self.pending == 0:
                self.txn_started_at = time.monotonic()
            self.pending += 1
            return

    def _commit(self) -> None:
        positions = [tp for tp in self.consumer.position(self.consumer.assignment()) if tp.offset >= 0]
        try:
            group = self.consumer.consumer_group_metadata()
            self._retrying("send_offsets_to_transaction",
                           lambda timeout: self.producer.send_offsets_to_transaction(positions, group, timeout))
            self._retrying("commit_transaction", self.producer.commit_transaction)
        except KafkaException as exc:
            error = exc.args[0]
            if not error.txn_requires_abort():
                raise CopierFailed(f"commit failed: {error}") from exc
            self._abort_and_rewind(error)
            return
        self.pending = 0
        self.producer.begin_transaction()
        self.committed.update((tp.partition, tp.offset) for tp in positions)
        emit(f"committed {sum(self.committed.values())}")
        faulthandler.dump_traceback_later(STALL_REPORT_S, repeat=True)

    def _retrying(self, name: str, call: Callable[[float], object]) -> None:
        """Repeat a transactional call while it fails retriably (its outcome is then still unknown)."""
        while True:
            guard = threading.Timer(CLIENT_TIMEOUT_S + STALL_GRACE_S, _exit_stalled, args=(name,))
            guard.daemon = True
            guard.start()
            try:
                call(CLIENT_TIMEOUT_S)
                return
            except KafkaException as exc:
                if not exc.args[0].retriable():
                    raise
                print(f"retrying after: {exc.args[0]}", file=sys.stderr, flush=True)
            finally:
                guard.cancel()

    def _abort_and_rewind(self, error: KafkaError) -> None:
        print(f"aborting the transaction: {error}", file=sys.stderr, flush=True)
        self._retrying("abort_transaction", self.producer.abort_transaction)
        self.pending = 0
        assignment = self.consumer.assignment()
        if assignment:
            for tp in self.consumer.committed(assignment, CLIENT_TIMEOUT_S):
                offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
                self.consumer.seek(TopicPartition(tp.topic, tp.partition, offset))
        self.producer.begin_transaction()

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.committed = {tp.partition: max(tp.offset, 0) for tp in consumer.committed(partitions, CLIENT_TIMEOUT_S)}

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # Whoever is assigned these partitions next resumes from the committed offsets, so the records
        # copied from them since the last commit must not become visible.
        if self.pending:
            self._retrying("abort_transaction", self.producer.abort_transaction)
            self.pending = 0
            self.producer.begin_transaction()

    def _caught_up(self) -> bool:
        """True when every partition of the input is assigned and fully committed."""
        metadata = self.consumer.list_topics(self.settings.input_topic, CLIENT_TIMEOUT_S)
        topic = metadata.topics.get(self.settings.input_topic)
        assignment = self.consumer.assignment()
        if topic is None or topic.error is not None or len(assignment) != len(topic.partitions):
            known = len(topic.partitions) if topic is not None else "?"
            return self._waiting(f"assigned {sorted(tp.partition for tp in assignment)} of {known} partitions")
        for tp in self.consumer.committed(assignment, CLIENT_TIMEOUT_S):
            _, high = self.consumer.get_watermark_offsets(tp, CLIENT_TIMEOUT_S, cached=False)
            if tp.offset < high:
                return self._waiting(f"partition {tp.partition} committed {tp.offset} of {high}")
        return True

    def _waiting(self, reason: str) -> bool:
        if time.monotonic() - self._reported_wait_at >= WAIT_REPORT_S:
            self._reported_wait_at = time.monotonic()
            print(f"not caught up: {reason}", file=sys.stderr, flush=True)
        return False


def _exit_stalled(name: str) -> None:
    print(f"stalled: {name} has not returned {STALL_GRACE_S:g}s after its {CLIENT_TIMEOUT_S:g}s timeout; "
          "exiting to be restarted", file=sys.stderr, flush=True)
    os._exit(STALLED_EXIT)


def emit(line: str) -> None:
    print(line, flush=True)


def parse_args(argv: list[str] | None = None) -> CopierSettings:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--input", required=True, dest="input_topic")
    parser.add_argument("--output", required=True, dest="output_topic")
    parser.add_argument("--group", required=True)
    parser.add_argument("--transactional-id", required=True)
    parser.add_argument("--commit-records", type=int, default=2000, help="commit after this many records")
    parser.add_argument("--commit-ms", type=int, default=200, help="or once the transaction is this old")
    parser.add_argument("--exit-when-caught-up", action="store_true",
                        help="commit and exit once every input partition's committed offset is its end")
    args = parser.parse_args(argv)
    return CopierSettings(**vars(args))


def main(argv: list[str] | None = None) -> int:
    faulthandler.dump_traceback_later(STALL_REPORT_S, repeat=True)
    copier = Copier.connect(parse_args(argv))
    try:
        copier.run()
    except CopierFailed as exc:
        print(exc, file=sys.stderr, flush=True)
        return 1
    finally:
        copier.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

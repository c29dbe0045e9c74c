"""Delivery outcomes: one per batch, and a light future per record that reads it.

The records of a batch succeed or fail together, so they share one
:class:`ProduceResult` holding what the broker answered for the batch (its
base offset or the error). A record's :class:`FutureRecordMetadata` is that
result plus the record's index in the batch: sending a record creates no
lock, condition or callback list of its own, and completing a batch costs
one event plus one call per callback actually registered, not one
``set_result`` per record.

:class:`FutureRecordMetadata` offers the reading side of
``concurrent.futures.Future`` (``result``, ``exception``, ``done``,
``add_done_callback``). A record cannot be recalled once sent, so
``cancel`` returns False, as in Kafka's clients. It does not work with
``concurrent.futures.wait``; wait on ``result`` or use ``Producer.flush``.

Callbacks run on the thread that completes the batch (the producer's sender
thread), or at once on the registering thread if the batch is already done.
An exception a callback raises is logged and does not stop the others.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from spate.client.producer.record_metadata import RecordMetadata

log = logging.getLogger(__name__)

# Called as callback(metadata, None) on success or callback(None, error) on failure.
DeliveryCallback = Callable[["RecordMetadata | None", "BaseException | None"], None]


class ProduceResult:
    """The outcome of one batch for ``topic``/``partition``; ``timestamps`` holds each record's create time.

    Set once: the first ``complete`` or ``fail`` wins and later ones are
    ignored. Thread-safe.
    """

    __slots__ = ("topic", "partition", "timestamps", "base_offset", "log_append_time", "error", "done",
                 "_event", "_lock", "_callbacks")

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.timestamps: list[int] = []
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self.done = False
        self._event = threading.Event()
        self._lock = threading.Lock()
        # (record index, callback) in registration order; None once the outcome is known.
        self._callbacks: list[tuple[int, DeliveryCallback]] | None = []

    # --- outcome (the completing thread) ----------------------------------------------------------

    def complete(self, base_offset: int, log_append_time: int = -1) -> bool:
        """Record success; ``base_offset`` -1 means the offsets are unknown. False if already settled."""
        return self._settle(base_offset, log_append_time, None)

    def fail(self, error: BaseException) -> bool:
        """Record failure for every record of the batch. False if already settled."""
        return self._settle(-1, -1, error)

    def _settle(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        with self._lock:
            if self.done:
                return False
            self.base_offset = base_offset
            self.log_append_time = log_append_time
            self.error = error
            self.done = True
            callbacks, self._callbacks = self._callbacks, None
        self._event.set()
        if callbacks:
            self._run_all(callbacks)
        return True

    def _run_all(self, callbacks: list[tuple[int, DeliveryCallback]]) -> None:
        # ``_run`` inlined: this loop runs once per record that has a callback.
        error = self.error
        if error is not None:
            for _, callback in callbacks:
                try:
                    callback(None, error)
                except Exception:
                    log.exception("delivery callback for %s-%s failed", self.topic, self.partition)
            return
        topic, partition, timestamps = self.topic, self.partition, self.timestamps
        base, stamp = self.base_offset, self.log_append_time
        for index, callback in callbacks:
            try:
                callback(
                    RecordMetadata(
                        topic,
                        partition,
                        base + index if base >= 0 else -1,
                        stamp if stamp >= 0 else timestamps[index],
                    ),
                    None,
                )
            except Exception:
                log.exception("delivery callback for %s-%s failed", topic, partition)

    # --- reading ----------------------------------------------------------------------------------

    def metadata(self, index: int) -> RecordMetadata:
        """The metadata of record ``index`` (valid once done without error)."""
        base = self.base_offset
        stamp = self.log_append_time
        return RecordMetadata(
            self.topic,
            self.partition,
            base + index if base >= 0 else -1,
            stamp if stamp >= 0 else self.timestamps[index],
        )

    def wait(self, timeout: float | None) -> bool:
        return self.done or self._event.wait(timeout)

    def add_callback(self, index: int, callback: DeliveryCallback) -> None:
        """Call ``callback`` for record ``index`` once the outcome is known (now, if it is)."""
        with self._lock:
            callbacks = self._callbacks
            if callbacks is not None:
                callbacks.append((index, callback))
                return
        self._run(index, callback)

    def add_callback_unlocked(self, index: int, callback: DeliveryCallback) -> None:
        """``add_callback`` for a batch still being filled, which nothing can settle meanwhile.

        The producer appends a record and registers its callback under its
        own lock, and a batch is only settled after it has left the
        accumulator under that same lock, so the batch's lock is not needed.
        """
        self._callbacks.append((index, callback))  # type: ignore[union-attr]

    def _run(self, index: int, callback: DeliveryCallback) -> None:
        try:
            if self.error is None:
                callback(self.metadata(index), None)
            else:
                callback(None, self.error)
        except Exception:
            log.exception("delivery callback for %s-%s failed", self.topic, self.partition)


class FutureRecordMetadata:
    """The future of one sent record: resolves to its RecordMetadata, or fails with the reason."""

    __slots__ = ("_result", "_index")

    def __init__(self, result: ProduceResult, index: int) -> None:
        self._result = result
        self._index = index

    def done(self) -> bool:
        return self._result.done

    def running(self) -> bool:
        return not self._result.done

    def cancel(self) -> bool:
        """Always False: a sent record cannot be recalled."""
        return False

    def cancelled(self) -> bool:
        return False

    def result(self, timeout: float | None = None) -> RecordMetadata:
        """The record's metadata; raises the delivery error, or TimeoutError after ``timeout`` seconds."""
        result = self._result
        if not result.wait(timeout):
            raise TimeoutError(f"record not acknowledged within {timeout} s")
        if result.error is not None:
            raise result.error
        return result.metadata(self._index)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The delivery error, None on success; TimeoutError after ``timeout`` seconds."""
        result = self._result
        if not result.wait(timeout):
            raise TimeoutError(f"record not acknowledged within {timeout} s")
        return result.error

    def add_done_callback(self, fn: Callable[[FutureRecordMetadata], object]) -> None:
        """Call ``fn(self)`` once the outcome is known (at once if it already is)."""
        self._result.add_callback(self._index, lambda metadata, error: fn(self))

    def __repr__(self) -> str:
        result = self._result
        where = f"{result.topic}-{result.partition}"
        if not result.done:
            return f"<FutureRecordMetadata {where} pending>"
        if result.error is not None:
            return f"<FutureRecordMetadata {where} failed: {result.error!r}>"
        return f"<FutureRecordMetadata {where} done>"

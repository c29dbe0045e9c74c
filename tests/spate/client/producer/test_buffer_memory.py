"""buffer_memory: what incomplete batches hold, waiting for room, and waiting for batches to complete."""

from __future__ import annotations

import threading
import time

import pytest

from spate.client.errors import KafkaTimeoutError
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.buffer_memory import BufferMemory
from spate.structs import TopicPartition


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def batch() -> ProducerBatch:
    return ProducerBatch(TopicPartition("t", 0), 0.0, capacity=100)


def test_batches_hold_memory_until_they_complete() -> None:
    lock = threading.Lock()
    memory = BufferMemory(1_000, lock, Clock())
    first, second = batch(), batch()
    with lock:
        memory.reserve(first, 600)
        memory.reserve(second, 500)
        assert memory.used == 1_100 and memory.incomplete() == [first, second]
    memory.release(first)
    memory.release(first)  # a second report of the same batch frees nothing more
    assert memory.used == 500 and memory.incomplete() == [second]


def test_waiting_for_room_times_out_naming_the_limit() -> None:
    lock = threading.Lock()
    clock = Clock()
    memory = BufferMemory(100, lock, clock)
    with lock:
        memory.reserve(batch(), 100)
        clock.now = 5.0
        with pytest.raises(KafkaTimeoutError, match=r"buffer_memory \(100 bytes\) stayed full for 2000 ms"):
            memory.wait_for_room(deadline=5.0, max_block=2.0, check_usable=lambda: None)


def test_a_waiter_wakes_when_a_batch_completes_or_the_producer_fails() -> None:
    lock = threading.Lock()
    memory = BufferMemory(100, lock, time.monotonic)
    held = batch()
    with lock:
        memory.reserve(held, 100)
    threading.Timer(0.05, memory.release, [held]).start()
    with lock:
        memory.wait_for_room(deadline=time.monotonic() + 5, max_block=5.0, check_usable=lambda: None)
        assert memory.used == 0

    with lock:
        memory.reserve(batch(), 100)
    failure = RuntimeError("the producer failed")

    def check() -> None:
        raise failure

    threading.Timer(0.05, memory.wake_waiters).start()
    with lock, pytest.raises(RuntimeError) as raised:
        memory.wait_for_room(deadline=time.monotonic() + 5, max_block=5.0, check_usable=check)
    assert raised.value is failure


def test_waiting_for_batches_to_complete_reports_a_timeout() -> None:
    memory = BufferMemory(1_000, threading.Lock(), Clock())
    pending = batch()
    assert not memory.wait_until_done([pending], 0.01)
    pending.complete(0)
    assert memory.wait_until_done([pending], 0.01)

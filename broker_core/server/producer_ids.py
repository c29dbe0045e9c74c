"""Producer ids for idempotent producers, handed out from blocks the metadata store reserves.

A block is reserved persistently before any id from it is used, so ids are
never reused across restarts; ids left in a block at shutdown are skipped.

Embedded, the store is a local file and a block is taken when needed. In a
cluster the store is ZooKeeper (``/latest_producer_id_block``), which the
event loop must not wait on: blocks are taken on a worker thread, the first
at start and the next once nine tenths of the current one are used, as
Kafka's broker prefetches them. An id asked for while no block is ready
raises COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from broker_core.cluster.metadata_store import MetadataStore, ProducerIdBlock
from spate.protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

BLOCK_SIZE = 1000
PREFETCH_AT = 0.9


class ProducerIdManager:
    def __init__(
        self, store: MetadataStore, broker_id: int, *, block_size: int = BLOCK_SIZE, background: bool = False
    ) -> None:
        self._store = store
        self._broker_id = broker_id
        self._block_size = block_size
        self._block: ProducerIdBlock | None = None
        self._next = 0
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="producer-id-blocks") if background else None
        self._pending: Future[ProducerIdBlock] | None = None

    def start(self) -> None:
        """Take the first block ahead of the first request (background mode)."""
        if self._executor is not None:
            self._prefetch()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def next_id(self) -> int:
        if self._block is None or self._next > self._block.last:
            self._take_block()
        producer_id = self._next
        self._next += 1
        if self._executor is not None and self._pending is None and self._used_fraction() >= PREFETCH_AT:
            self._prefetch()
        return producer_id

    def _take_block(self) -> None:
        if self._executor is None:
            self._install(self._allocate())
            return
        pending = self._pending
        if pending is None or not pending.done():
            self._prefetch()
            raise KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "a block of producer ids is being reserved")
        self._pending = None
        try:
            block = pending.result()
        except Exception as exc:
            logger.warning("reserving a block of producer ids failed: %s", exc)
            self._prefetch()
            raise KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "reserving producer ids failed; retry") from exc
        self._install(block)

    def _install(self, block: ProducerIdBlock) -> None:
        self._block = block
        self._next = block.first

    def _allocate(self) -> ProducerIdBlock:
        return self._store.allocate_producer_id_block(self._broker_id, self._block_size)

    def _prefetch(self) -> None:
        if self._pending is None and self._executor is not None:
            self._pending = self._executor.submit(self._allocate)

    def _used_fraction(self) -> float:
        if self._block is None:
            return 1.0
        return (self._next - self._block.first) / self._block.size

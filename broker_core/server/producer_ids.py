"""Producer ids for idempotent producers, handed out from blocks the metadata store reserves.

A block is reserved persistently before any id from it is used, so ids are
never reused across restarts; ids left in a block at shutdown are skipped.
"""

from __future__ import annotations

from broker_core.cluster.metadata_store import MetadataStore, ProducerIdBlock

BLOCK_SIZE = 1000


class ProducerIdManager:
    def __init__(self, store: MetadataStore, broker_id: int, *, block_size: int = BLOCK_SIZE) -> None:
        self._store = store
        self._broker_id = broker_id
        self._block_size = block_size
        self._block: ProducerIdBlock | None = None
        self._next = 0

    def next_id(self) -> int:
        if self._block is None or self._next > self._block.last:
            self._block = self._store.allocate_producer_id_block(self._broker_id, self._block_size)
            self._next = self._block.first
        producer_id = self._next
        self._next += 1
        return producer_id

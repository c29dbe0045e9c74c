"""Producer id blocks from ``/latest_producer_id_block`` (Kafka's ZooKeeper scheme).

Read the latest block and the znode's data version, take the ids right after
it, and write the new block conditionally on that version. If another broker
wrote in between, the write fails and the whole step repeats, so two brokers
never take the same block. A first block starts at 0.

Within one process a lock keeps threads from racing each other; racing
other processes is bounded by :data:`MAX_CONFLICTS` lost rounds.
"""

from __future__ import annotations

import threading

from kazoo.exceptions import BadVersionError, NoNodeError

from broker_core.cluster.errors import MetadataError
from broker_core.cluster.metadata_store import DEFAULT_PRODUCER_ID_BLOCK_SIZE, ProducerIdBlock
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes.cluster import ProducerIdBlockZNode

MAX_PRODUCER_ID = 2**63 - 1  # Kafka's Long.MaxValue
MAX_CONFLICTS = 100


class ProducerIdBlockAllocator:
    """Takes producer id blocks for this process's brokers."""

    def __init__(self, session: ZkSession) -> None:
        self._session = session
        self._lock = threading.Lock()

    def allocate(self, broker_id: int, size: int = DEFAULT_PRODUCER_ID_BLOCK_SIZE) -> ProducerIdBlock:
        """Reserve the next ``size`` ids for ``broker_id``; durable in ZooKeeper before it returns."""
        if size < 1:
            raise ValueError(f"producer id block size must be at least 1, got {size}")
        path = ProducerIdBlockZNode.path()
        with self._lock:
            for _ in range(MAX_CONFLICTS):
                try:
                    data, stat = self._session.get(path)
                except NoNodeError:
                    self._session.ensure_path(path)
                    continue
                latest = ProducerIdBlockZNode.decode(data)
                first = latest.last + 1 if latest is not None else 0
                if first + size - 1 > MAX_PRODUCER_ID:
                    raise MetadataError("producer ids are exhausted")
                block = ProducerIdBlock(first=first, last=first + size - 1, broker_id=broker_id)
                if self._write(block, stat.version):
                    return block
        raise MetadataError(f"{path}: lost {MAX_CONFLICTS} races for a producer id block in a row")

    def _write(self, block: ProducerIdBlock, version: int) -> bool:
        """Write ``block`` if the znode is still at ``version``; False if someone else wrote first."""
        path = ProducerIdBlockZNode.path()
        data = ProducerIdBlockZNode.encode(block)

        def attempt(retrying: bool) -> bool:
            if retrying:
                # The lost try may have landed: then the znode holds exactly our block, one version on.
                current, stat = self._session.get(path)
                if stat.version == version + 1 and current == data:
                    return True
            try:
                self._session.set(path, data, version=version)
            except BadVersionError:
                return False
            return True

        return self._session.retry_write(attempt)

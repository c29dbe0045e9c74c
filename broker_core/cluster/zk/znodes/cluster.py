"""Cluster-wide values: ``/cluster/id`` and ``/latest_producer_id_block``.

``/cluster/id`` is written once, by the first broker of the cluster::

    {"version":"1","id":"<22-char base64>"}

(the version is a string there, as Kafka writes it).

``/latest_producer_id_block`` holds the last block of producer ids handed
out; a broker takes the next one with a write conditional on the data
version, so two brokers never take the same block. The ids are strings
because they are 64-bit::

    {"version":1,"broker":0,"block_start":"0","block_end":"999"}

The znode exists with no data until the first block is taken.
"""

from __future__ import annotations

from broker_core.cluster.metadata_store import ProducerIdBlock
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes.fields import JsonFields, encode_json

CLUSTER_ID_VERSION = "1"
PRODUCER_ID_BLOCK_VERSION = 1


class ClusterIdZNode:
    """``/cluster/id``: the cluster id."""

    @staticmethod
    def path() -> str:
        return "/cluster/id"

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        return encode_json({"version": CLUSTER_ID_VERSION, "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None) -> str:
        fields = JsonFields.parse(ClusterIdZNode.path(), data)
        cluster_id = fields.text("id")
        if not cluster_id:
            raise fields.fail("id", "is empty")
        return cluster_id


class ProducerIdBlockZNode:
    """``/latest_producer_id_block``: the latest block of producer ids taken, or no data."""

    @staticmethod
    def path() -> str:
        return "/latest_producer_id_block"

    @staticmethod
    def encode(block: ProducerIdBlock) -> bytes:
        return encode_json(
            {
                "version": PRODUCER_ID_BLOCK_VERSION,
                "broker": block.broker_id,
                "block_start": str(block.first),
                "block_end": str(block.last),
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> ProducerIdBlock | None:
        """The latest block, or ``None`` while none has been taken (the znode has no data)."""
        if not data:
            return None
        fields = JsonFields.parse(ProducerIdBlockZNode.path(), data)
        fields.version()
        first = fields.long_text("block_start", minimum=0)
        last = fields.long_text("block_end", minimum=0)
        if last < first:
            raise ZNodeDecodeError(ProducerIdBlockZNode.path(), f"block_end {last} is below block_start {first}")
        return ProducerIdBlock(first=first, last=last, broker_id=fields.integer("broker"))

"""Topic ids for topics whose znode has none, as Kafka's controller gives them.

A topic created by a Kafka older than 2.8 (or by a tool writing version 1
of ``/brokers/topics/<t>``) has no ``topic_id``. Kafka's controller assigns
one when it loads such a topic; Spate does the same wherever a topic znode is
read: a random id (never the zero UUID nor Kafka's reserved metadata-topic
id) written back conditionally on the data version read, so that when two
brokers race, one id wins and both use it.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from typing import Callable

from kazoo.exceptions import BadVersionError

from broker_core.cluster.errors import MetadataError
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes.topics import TopicAssignment, TopicZNode

logger = logging.getLogger(__name__)

RESERVED_TOPIC_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})
# Each lost race means another writer set an id (or changed the znode); a few re-reads settle it.
MAX_ATTEMPTS = 5


def new_topic_id(source: Callable[[], uuid.UUID] = uuid.uuid4) -> uuid.UUID:
    while True:
        candidate = source()
        if candidate not in RESERVED_TOPIC_IDS:
            return candidate


def with_topic_id(
    session: ZkSession, name: str, assignment: TopicAssignment, version: int
) -> tuple[TopicAssignment, int]:
    """``assignment`` and its znode version, with a topic id written first if it had none."""
    for _ in range(MAX_ATTEMPTS):
        if assignment.topic_id is not None:
            return assignment, version
        given = replace(assignment, topic_id=new_topic_id())
        try:
            stat = session.set(TopicZNode.path(name), TopicZNode.encode(given), version=version)
        except BadVersionError:
            data, read = session.get(TopicZNode.path(name))
            assignment, version = TopicZNode.decode(name, data), read.version
            continue
        logger.info("topic %s had no topic id in ZooKeeper (written by a Kafka before 2.8): assigned %s",
                    name, given.topic_id)
        return given, stat.version
    raise MetadataError(f"topic {name!r} kept changing while a topic id was assigned to it")

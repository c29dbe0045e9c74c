"""Topic ids as requests use them: Metadata v10+, Fetch v13+, DeleteTopics v6+.

Every topic has an id from its creation (the ``topic_id`` of its ZooKeeper
znode, or the embedded store's record), so a request naming a topic by id
is resolved here to the name the rest of the broker works with.
"""

from __future__ import annotations

import uuid

from broker_core.cluster.errors import UnknownTopicError
from broker_core.server.metadata_view import MetadataView
from spate.protocol.types import ZERO_UUID


def topic_names_by_id(view: MetadataView) -> dict[uuid.UUID, str]:
    """Every known topic's name, by id."""
    names = {}
    for name in view.topic_names():
        try:
            topic_id = view.get_topic(name).topic_id
        except UnknownTopicError:
            continue  # deleted between the listing and the lookup
        if topic_id != ZERO_UUID:
            names[topic_id] = name
    return names


def topic_id_of(view: MetadataView, name: str) -> uuid.UUID:
    """The topic's id, or the zero UUID when the topic is unknown."""
    try:
        return view.get_topic(name).topic_id
    except UnknownTopicError:
        return ZERO_UUID

"""Kafka's topic naming rules.

A topic name is 1 to 249 characters of ``[a-zA-Z0-9._-]`` and is neither
``.`` nor ``..`` (both would be special as directory names). Because metric
names turn ``.`` into ``_``, two topics differing only in those characters
(``my.topic`` and ``my_topic``) are not allowed to coexist, and creating a
name containing either character earns a warning.
"""

from __future__ import annotations

import re
from typing import Iterable

from broker_core.cluster.errors import InvalidTopicNameError
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.protocol.internal_records.transaction_log import TRANSACTION_STATE_TOPIC

MAX_TOPIC_NAME_LENGTH = 249
INTERNAL_TOPICS = frozenset({CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC})

_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(name: str) -> None:
    """Raise :class:`InvalidTopicNameError` saying which rule ``name`` breaks."""
    if not name:
        raise InvalidTopicNameError("topic name is empty")
    if name in (".", ".."):
        raise InvalidTopicNameError(f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicNameError(
            f"topic name is {len(name)} characters long; the limit is {MAX_TOPIC_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        bad = sorted({c for c in name if not _LEGAL.fullmatch(c)})
        raise InvalidTopicNameError(
            f"topic name {name!r} contains {''.join(bad)!r}; only ASCII letters, digits, '.', '_' and '-' are allowed"
        )


def is_valid_topic_name(name: str) -> bool:
    try:
        validate_topic_name(name)
    except InvalidTopicNameError:
        return False
    return True


def is_internal_topic(name: str) -> bool:
    return name in INTERNAL_TOPICS


def has_collision_chars(name: str) -> bool:
    return "." in name or "_" in name


def unify_collision_chars(name: str) -> str:
    """The form under which ``.`` and ``_`` variants of a name collide."""
    return name.replace(".", "_")


def find_collision(name: str, existing: Iterable[str]) -> str | None:
    """An existing topic other than ``name`` itself that collides with it, if any."""
    if not has_collision_chars(name):
        return None
    unified = unify_collision_chars(name)
    for other in existing:
        if other != name and unify_collision_chars(other) == unified:
            return other
    return None


def collision_warning(name: str) -> str | None:
    """The warning to log when creating ``name``, or ``None`` if it needs none.

    Names starting with ``_`` are a system's own by convention (Kafka's ``__consumer_offsets``,
    Spate's ``_spate_sink_batches``): nothing a user should act on, so no warning.
    """
    if not has_collision_chars(name) or name.startswith("_"):
        return None
    return (
        f"topic {name!r} contains '.' or '_'; metric names treat them alike, "
        "so do not also create a topic that differs only in those characters"
    )

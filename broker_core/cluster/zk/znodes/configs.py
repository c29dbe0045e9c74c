"""Config overrides: ``/config/<type>/<name>`` and the ``/config/changes`` notifications.

An entity's overrides (a topic's, with type ``topics``) are one znode::

    {"version":1,"config":{"cleanup.policy":"compact"}}

Whoever changes them also creates a sequential znode
``/config/changes/config_change_<10-digit seq>`` naming the entity,
``{"version":2,"entity_path":"topics/<t>"}``, so that every broker watching
``/config/changes`` re-reads it. Notifications are deleted once older than
:data:`CONFIG_CHANGE_EXPIRATION_MS` (Kafka's 15 minutes).
"""

from __future__ import annotations

from typing import Mapping

from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes.fields import JsonFields, encode_json
from broker_core.cluster.zk.znodes.sequential import SequentialZNode

TOPIC = "topics"
CONFIG_VERSION = 1
CONFIG_CHANGE_VERSION = 2
CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000


class ConfigEntityTypeZNode:
    """``/config/<type>``: its children are the entities of that type with overrides."""

    @staticmethod
    def path(entity_type: str) -> str:
        return f"/config/{entity_type}"


class ConfigEntityZNode:
    """``/config/<type>/<name>``: one entity's config overrides, every value a string."""

    @staticmethod
    def path(entity_type: str, name: str) -> str:
        return f"{ConfigEntityTypeZNode.path(entity_type)}/{name}"

    @staticmethod
    def encode(configs: Mapping[str, str]) -> bytes:
        return encode_json({"version": CONFIG_VERSION, "config": {key: configs[key] for key in sorted(configs)}})

    @staticmethod
    def decode(entity_type: str, name: str, data: bytes | None) -> dict[str, str]:
        fields = JsonFields.parse(ConfigEntityZNode.path(entity_type, name), data)
        fields.version()
        return fields.text_map("config")


class TopicConfigZNode:
    """``/config/topics/<t>``: a topic's config overrides."""

    @staticmethod
    def path(topic: str) -> str:
        return ConfigEntityZNode.path(TOPIC, topic)

    @staticmethod
    def encode(configs: Mapping[str, str]) -> bytes:
        return ConfigEntityZNode.encode(configs)

    @staticmethod
    def decode(topic: str, data: bytes | None) -> dict[str, str]:
        return ConfigEntityZNode.decode(TOPIC, topic, data)


class ConfigChangesZNode:
    """``/config/changes``: the parent of the change notifications."""

    @staticmethod
    def path() -> str:
        return "/config/changes"


class ConfigChangeNotificationZNode(SequentialZNode):
    """``/config/changes/config_change_<seq>``: "the overrides of this entity changed"."""

    PARENT = ConfigChangesZNode.path()
    PREFIX = "config_change_"

    @staticmethod
    def encode(entity_type: str, name: str) -> bytes:
        return encode_json({"version": CONFIG_CHANGE_VERSION, "entity_path": f"{entity_type}/{name}"})

    @staticmethod
    def decode(node_name: str, data: bytes | None) -> tuple[str, str]:
        """The ``(entity type, entity name)`` a notification names."""
        path = ConfigChangeNotificationZNode.path(node_name)
        fields = JsonFields.parse(path, data)
        fields.version(minimum=CONFIG_CHANGE_VERSION)
        entity_type, slash, name = fields.text("entity_path").partition("/")
        if not slash or not entity_type or not name:
            raise ZNodeDecodeError(path, f"field 'entity_path' is {fields.text('entity_path')!r}, not <type>/<name>")
        return entity_type, name

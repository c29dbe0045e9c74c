"""AlterConfigs / IncrementalAlterConfigs / DescribeConfigs on resource ``BROKER``, and applying the result.

The resource name is this broker's id (its own dynamic configs) or ``""``
(the cluster-wide defaults); another id is INVALID_REQUEST, as in Kafka,
whose clients send a broker's resource to that broker. A change is validated
(:func:`~broker_core.config.dynamic_broker_config.validate_dynamic_configs`
and the merged configuration as a whole), stored, then applied: the
reconfigurables registered for the changed names are called on the event loop
with the old and new configuration. In a cluster every broker applies the
change when the store's notification arrives.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.dynamic_broker_config import (
    APPLIED_AT_RUNTIME,
    DEFAULT_ENTITY,
    DynamicBrokerConfig,
    apply_broker_ops,
    merged_config,
    validate_dynamic_configs,
)
from broker_core.config.incremental_configs import ConfigOp
from broker_core.server.dynamic_config_store import DynamicConfigStore
from spate.protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

Reconfigure = Callable[[BrokerConfig, BrokerConfig], None]


@dataclass(frozen=True)
class Reconfigurable:
    """Something of the running broker that follows ``names``."""

    names: frozenset[str]
    reconfigure: Reconfigure


class DynamicConfigManager:
    def __init__(self, static: BrokerConfig, store: DynamicConfigStore,
                 call_soon: Callable[[Callable[[], None]], None] | None = None) -> None:
        self._store = store
        self._call_soon = call_soon
        self.dynamic = DynamicBrokerConfig(static, store.read(DEFAULT_ENTITY), store.read(str(static.node_id)))
        self._reconfigurables: list[Reconfigurable] = []

    @property
    def current(self) -> BrokerConfig:
        """The configuration in force: static properties with the dynamic layers on top."""
        return self.dynamic.current

    @property
    def node_id(self) -> int:
        return self.dynamic.node_id

    def add_reconfigurable(self, names: frozenset[str], reconfigure: Reconfigure) -> None:
        self._reconfigurables.append(Reconfigurable(names, reconfigure))

    def entity_for(self, resource_name: str) -> str:
        """``<default>`` for ``""``, else this broker's id; INVALID_REQUEST for anything else (Kafka's words)."""
        if not resource_name:
            return DEFAULT_ENTITY
        try:
            broker_id = int(resource_name)
        except ValueError:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Broker id must be an integer, but it is: {resource_name}") from None
        if broker_id != self.node_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unexpected broker id, expected {self.node_id}, but received {resource_name}")
        return str(broker_id)

    # --- changes -------------------------------------------------------------------------------

    async def alter(self, resource_name: str, configs: Mapping[str, str | None], *, validate_only: bool) -> None:
        """AlterConfigs: the layer becomes exactly ``configs`` (entries without a value are left out)."""
        entity = self.entity_for(resource_name)
        new = {name: value for name, value in configs.items() if value is not None}
        self._validate(entity, new)
        if not validate_only:
            await self._write(entity, lambda _current: new)

    async def incremental_alter(self, resource_name: str, ops: Sequence[ConfigOp], *, validate_only: bool) -> None:
        """IncrementalAlterConfigs: SET, DELETE, APPEND or SUBTRACT keys of the layer."""
        entity = self.entity_for(resource_name)

        def update(current: dict[str, str]) -> dict[str, str]:
            new = apply_broker_ops(current, ops)
            self._validate(entity, new)
            return new

        if validate_only:
            update(await asyncio.to_thread(self._store.read, entity))
        else:
            await self._write(entity, update)

    def _validate(self, entity: str, layer: Mapping[str, str]) -> None:
        per_broker = entity != DEFAULT_ENTITY
        validate_dynamic_configs(layer, per_broker=per_broker)
        dynamic = self.dynamic
        # The merged whole must still be a valid configuration (retention 0, listeners on one port ...).
        merged_config(dynamic.static, dynamic.defaults if per_broker else layer,
                      layer if per_broker else dynamic.per_broker)

    async def _write(self, entity: str, update: Callable[[dict[str, str]], dict[str, str]]) -> None:
        await asyncio.to_thread(self._store.update, entity, update)
        logger.info("dynamic broker configs of %s changed", "the cluster default" if entity == DEFAULT_ENTITY
                    else f"broker {entity}")
        defaults, per_broker = await asyncio.to_thread(self._read_layers)
        self.apply(defaults, per_broker)

    # --- applying --------------------------------------------------------------------------------

    def _read_layers(self) -> tuple[dict[str, str], dict[str, str]]:
        return self._store.read(DEFAULT_ENTITY), self._store.read(str(self.node_id))

    def reload_from_thread(self) -> None:
        """On a store thread after a change notification: read the layers, apply them on the loop."""
        defaults, per_broker = self._read_layers()
        if self._call_soon is not None:
            self._call_soon(lambda: self.apply(defaults, per_broker))
        else:
            self.apply(defaults, per_broker)

    def apply(self, defaults: Mapping[str, str], per_broker: Mapping[str, str]) -> None:
        old = self.dynamic
        if dict(defaults) == old.defaults and dict(per_broker) == old.per_broker:
            return
        try:
            new = DynamicBrokerConfig(old.static, dict(defaults), dict(per_broker))
        except Exception as exc:  # written by a broker of another version, say: keep what is in force
            logger.error("ignoring dynamic broker configs that do not make a valid configuration: %s", exc)
            return
        self.dynamic = new
        changed = _changed_names(old, new)
        for reconfigurable in self._reconfigurables:
            if changed & reconfigurable.names:
                try:
                    reconfigurable.reconfigure(old.current, new.current)
                except Exception:
                    logger.exception("applying the dynamic broker configs %s failed", sorted(changed))
        later = sorted(changed - APPLIED_AT_RUNTIME)
        logger.info("dynamic broker configs in force: %s%s", sorted(changed),
                    f"; these take effect when the broker restarts: {', '.join(later)}" if later else "")

    def close(self) -> None:
        self._store.close()


def _changed_names(old: DynamicBrokerConfig, new: DynamicBrokerConfig) -> set[str]:
    changed = {name for name, value in new.current.values.items() if old.current.values.get(name) != value}
    for before, after in ((old.defaults, new.defaults), (old.per_broker, new.per_broker)):
        changed |= {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    return changed

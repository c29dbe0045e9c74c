"""Changing one ``/config/<type>/<name>`` znode the way Kafka's AdminZkClient does.

Several owners share one entity znode (a user's SCRAM credentials and its
client quotas live in ``/config/users/<user>``), so each change is a
read-modify-write conditional on the znode's version, committed in one
transaction with the ``/config/changes`` notification that tells the other
brokers to reload it. A concurrent writer makes the change read again.
"""

from __future__ import annotations

from typing import Callable

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes import ConfigChangeNotificationZNode, ConfigEntityZNode

ATTEMPTS = 10

ConfigUpdate = Callable[[dict[str, str]], dict[str, str]]


class ConcurrentConfigChangeError(RuntimeError):
    """Other writers changed the znode on every attempt."""


class _Stale(Exception):
    pass


def update_config_entity(session: ZkSession, entity_path: str, update: ConfigUpdate) -> None:
    """Apply ``update`` to the configs of ``entity_path`` (``users/alice``, ``users/alice/clients/app``, ...).

    The znode's parents must exist; the znode itself is created when missing.
    """
    entity_type, _, name = entity_path.partition("/")
    znode = f"/config/{entity_path}"
    session.ensure_path(ConfigChangeNotificationZNode.PARENT)

    def attempt(retrying: bool) -> None:
        try:
            data, stat = session.get(znode)
            configs, version = ConfigEntityZNode.decode(entity_type, name, data), stat.version
        except NoNodeError:
            configs, version = {}, None
        changed = ConfigEntityZNode.encode(update(configs))
        transaction = session.transaction()
        if version is None:
            transaction.create(znode, changed)
        else:
            transaction.set_data(znode, changed, version=version)
        transaction.create(ConfigChangeNotificationZNode.create_path(),
                           ConfigChangeNotificationZNode.encode(entity_type, name), sequence=True)
        failure = next((r for r in session.commit(transaction) if isinstance(r, Exception)), None)
        if isinstance(failure, (NodeExistsError, NoNodeError, BadVersionError)):
            raise _Stale()
        if failure is not None:
            raise failure

    for _ in range(ATTEMPTS):
        try:
            session.retry_write(attempt)
            return
        except _Stale:
            continue
    raise ConcurrentConfigChangeError(f"could not change the configs of {entity_path}: concurrent updates")

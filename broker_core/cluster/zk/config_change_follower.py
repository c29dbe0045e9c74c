"""Following ``/config/changes``: reload what a store caches each time another broker announces a change.

A writer commits its ``/config/<type>/<name>`` change together with a
notification under ``/config/changes`` (``config_entity_zk.py``). A store that
caches entities watches that znode's children, and on each notification (or
every ``RELOAD_INTERVAL_S``, in case a watch was lost) re-arms the watch and
reloads, on a thread of its own. While ZooKeeper is away the cache stays as it
was and the next round tries again.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from kazoo.exceptions import NoNodeError

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes import ConfigChangesZNode

logger = logging.getLogger(__name__)

RELOAD_INTERVAL_S = 30.0


class ConfigChangeFollower:
    """Arms the watch when made; :meth:`start` begins calling ``reload`` after each change, :meth:`close` stops."""

    def __init__(self, session: ZkSession, reload: Callable[[], None], what: str) -> None:
        self._session = session
        self._reload = reload
        self._what = what
        self._changed = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"{what}-reloader".replace(" ", "-"), daemon=True)
        self._watch()

    def start(self) -> ConfigChangeFollower:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed = True
        self._changed.set()

    def _watch(self) -> None:
        try:
            self._session.get_children(ConfigChangesZNode.path(), watch=lambda _event: self._changed.set())
        except NoNodeError:
            self._session.exists(ConfigChangesZNode.path(), watch=lambda _event: self._changed.set())

    def _run(self) -> None:
        while not self._closed:
            self._changed.wait(RELOAD_INTERVAL_S)
            self._changed.clear()
            if self._closed:
                return
            try:
                self._watch()
                self._reload()
            except Exception:  # ZooKeeper away: keep what is cached and try again later
                logger.warning("could not reload the %s", self._what, exc_info=True)

"""Clients an executor keeps between tasks: connections and metadata outlive the task that made them.

A Python worker of Spark runs many tasks one after another (and the driver
commits many micro-batches); making a client for each costs a TCP (and TLS,
SASL) handshake per broker, a Metadata round trip and, for an idempotent
producer, an InitProducerId. :class:`ClientPool` keeps idle clients keyed by
:class:`PoolKey` (kind, factory, bootstrap servers and every setting,
security included) and lends them out one borrower at a time::

    with shared_pool().borrow(key, make_producer) as producer:
        ...   # this task's records; flush before leaving

What can be shared and what cannot:

* a plain (idempotent) producer or an Admin client: yes, one task at a
  time; the next borrower finds its connections open and its metadata warm.
  (The source's readers keep their consumers in ``consumer_cache``, with the
  records they fetched past a range's end.)
* a transactional producer: no. Its transactional id names one task
  (``<sink id>-<partition>``), each attempt must fence the previous one with
  its own ``init_transactions``, and the exactly-once sink closes it after
  handing its open transaction to the driver, so it is never pooled.

A borrower that raises closes the client instead of handing it back (its
state is unknown). Bounds: at most ``max_idle_per_key`` idle clients per key
and ``max_idle`` in all (a client handed back beyond them is closed); an
idle client is closed after ``idle_timeout_s`` by a daemon thread that runs
while the pool holds any. Every idle client is closed at interpreter exit.
Borrowed clients are not counted: at most one per running task.

Thread-safe. After ``fork`` the child starts with an empty pool (the
parent's sockets are the parent's).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, TypeVar

logger = logging.getLogger(__name__)

C = TypeVar("C")

DEFAULT_MAX_IDLE_PER_KEY = 4
DEFAULT_MAX_IDLE = 16
DEFAULT_IDLE_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class PoolKey:
    """Which clients are interchangeable: same kind, factory, servers and settings."""

    kind: str
    factory: Callable[..., Any]
    bootstrap_servers: str
    settings: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, kind: str, factory: Callable[..., Any], bootstrap_servers: str,
           settings: Mapping[str, Any]) -> PoolKey:
        return cls(kind, factory, bootstrap_servers, tuple(sorted((k, repr(v)) for k, v in settings.items())))

    def __repr__(self) -> str:  # settings may hold passwords: never print them
        return f"PoolKey({self.kind!r}, {self.bootstrap_servers!r})"


@dataclass
class _Idle:
    client: Any
    since: float


def close_client(client: Any) -> None:
    """Close a producer, consumer or admin client without raising."""
    try:
        if hasattr(client, "flush") and hasattr(client, "send"):  # a producer: bound the wait for queued records
            client.close(_CLOSE_TIMEOUT_S)
        else:
            client.close()
    except Exception as exc:  # noqa: BLE001 - nothing can be done about a client that fails to close
        logger.debug("closing a pooled %s failed: %s", type(client).__name__, exc)


class ClientPool:
    def __init__(
        self,
        *,
        max_idle_per_key: int = DEFAULT_MAX_IDLE_PER_KEY,
        max_idle: int = DEFAULT_MAX_IDLE,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
        reaper: bool = True,
    ) -> None:
        """``reaper`` False: no eviction thread (tests call :meth:`evict_idle` with their clock)."""
        if max_idle_per_key < 0 or max_idle < 0 or idle_timeout_s <= 0:
            raise ValueError("pool bounds must not be negative and the idle timeout must be positive")
        self.max_idle_per_key = max_idle_per_key
        self.max_idle = max_idle
        self.idle_timeout_s = idle_timeout_s
        self._clock = clock
        self._use_reaper = reaper
        self._lock = threading.Lock()
        self._idle: dict[PoolKey, list[_Idle]] = {}
        self._reaper: threading.Thread | None = None
        self._wake = threading.Event()
        self._closed = False
        self.created = 0
        self.reused = 0

    # --- borrowing ----------------------------------------------------------------------------------

    @contextmanager
    def borrow(
        self, key: PoolKey, make: Callable[[], C], *, reset: Callable[[C], None] | None = None
    ) -> Iterator[C]:
        """An idle client of ``key`` (or a new one from ``make``), this borrower's alone until the block ends.

        ``reset`` readies a client to be handed back (e.g. unassign a consumer);
        if it raises, the client is closed instead.
        """
        client = self._take(key)
        if client is None:
            client = make()
            with self._lock:
                self.created += 1
        try:
            yield client
        except BaseException:
            close_client(client)
            raise
        try:
            if reset is not None:
                reset(client)
        except Exception as exc:  # noqa: BLE001 - the client is not fit for the next borrower
            logger.debug("a pooled %s could not be reset, closing it: %s", type(client).__name__, exc)
            close_client(client)
            return
        self._give_back(key, client)

    def _take(self, key: PoolKey) -> Any | None:
        with self._lock:
            idle = self._idle.get(key)
            while idle:
                entry = idle.pop()  # the most recently used: its connections are the least likely to be stale
                if not getattr(entry.client, "closed", False):
                    self.reused += 1
                    return entry.client
        return None

    def _give_back(self, key: PoolKey, client: Any) -> None:
        if getattr(client, "closed", False):
            return
        with self._lock:
            keep = not self._closed and self._idle_count() < self.max_idle
            idle = self._idle.setdefault(key, [])
            keep = keep and len(idle) < self.max_idle_per_key
            if keep:
                idle.append(_Idle(client, self._clock()))
                self._start_reaper()
        if not keep:
            close_client(client)

    def _idle_count(self) -> int:
        return sum(len(entries) for entries in self._idle.values())

    @property
    def idle_count(self) -> int:
        with self._lock:
            return self._idle_count()

    # --- eviction -----------------------------------------------------------------------------------

    def evict_idle(self) -> int:
        """Close every client idle for ``idle_timeout_s`` or longer; returns how many."""
        now = self._clock()
        expired: list[Any] = []
        with self._lock:
            for key in list(self._idle):
                entries = self._idle[key]
                kept = [e for e in entries if now - e.since < self.idle_timeout_s]
                expired.extend(e.client for e in entries if now - e.since >= self.idle_timeout_s)
                if kept:
                    self._idle[key] = kept
                else:
                    del self._idle[key]
        for client in expired:
            close_client(client)
        return len(expired)

    def _start_reaper(self) -> None:
        """Lock held: make sure an eviction thread runs while clients are idle."""
        if not self._use_reaper or (self._reaper is not None and self._reaper.is_alive()):
            return
        self._reaper = threading.Thread(target=self._reap, name="spate-client-pool-reaper", daemon=True)
        self._reaper.start()

    def _reap(self) -> None:
        interval = max(0.05, self.idle_timeout_s / 4)
        while not self._wake.wait(interval):
            self.evict_idle()
            with self._lock:
                if not self._idle:
                    self._reaper = None
                    return

    # --- closing ------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close every idle client; clients handed back later are closed too."""
        with self._lock:
            self._closed = True
            idle = [e.client for entries in self._idle.values() for e in entries]
            self._idle.clear()
        self._wake.set()
        for client in idle:
            close_client(client)

    def forget(self) -> None:
        """Drop every idle client without closing it (a forked child does not own its parent's sockets).

        Runs in a forked child, where the parent's threads are gone and the
        lock may have been held by one of them: everything is made anew.
        """
        self._lock = threading.Lock()
        self._idle = {}
        self._reaper = None
        self._wake = threading.Event()


_shared = ClientPool()


def shared_pool() -> ClientPool:
    """This process's pool: the sink's tasks borrow from it (the source keeps its own, ``consumer_cache``)."""
    return _shared


atexit.register(lambda: _shared.close())
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _shared.forget())

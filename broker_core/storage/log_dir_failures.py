"""Log directories that failed I/O: reported where the failure surfaced, handled once per directory.

A disk that fails takes one log dir with it, not the broker (Kafka's
``LogDirFailureChannel``). Any I/O error from a log's segments, indexes or
checkpoints, and from a log dir's own checkpoint files, is reported here
with the path involved; the first report for a log dir marks it offline and
calls the broker's handler, which takes that dir's partitions offline and
tells the controller. Later reports for the same dir only add to the log.

Log operations report through :func:`reports_io_errors`: an ``OSError``
becomes a ``LogDirError`` (KAFKA_STORAGE_ERROR for the client) naming the
log, after the channel has heard of it. Running out of descriptors or memory
(EMFILE, ENFILE, ENOMEM) is the process's condition, not the disk's: the
request fails, the log dir stays online.
"""

from __future__ import annotations

import errno
import functools
import logging
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

from broker_core.storage.errors import LogDirError

_log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

# Errors of the process's resources: they say nothing of the disk under a log dir.
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM})


def is_resource_exhaustion(cause: BaseException) -> bool:
    """Whether ``cause`` (or what it wraps) is the process running out of descriptors or memory."""
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno in _RESOURCE_ERRNOS:
            return True
        cause = cause.__cause__
    return False


class LogDirFailureChannel:
    """Which of the broker's log dirs are offline, and who handles a new failure."""

    def __init__(self, log_dirs: list[Path], on_failure: Callable[[Path], None] | None = None) -> None:
        self._dirs = [Path(d) for d in log_dirs]
        self._offline: list[Path] = []
        # Logs close on several threads at shutdown: two failures in one dir still take it offline once.
        self._lock = threading.Lock()
        # Set by the broker once it can handle failures; a failure before that is only recorded.
        self.on_failure = on_failure

    @property
    def offline_dirs(self) -> list[Path]:
        return list(self._offline)

    @property
    def live_dirs(self) -> list[Path]:
        return [d for d in self._dirs if d not in self._offline]

    def is_offline(self, log_dir: Path) -> bool:
        return Path(log_dir) in self._offline

    def log_dir_of(self, path: Path) -> Path | None:
        """The log dir that ``path`` (a log dir, a partition dir or a file in either) lies in."""
        path = Path(path)
        for log_dir in self._dirs:
            if path == log_dir or log_dir in path.parents:
                return log_dir
        return None

    def report(self, path: Path, cause: BaseException) -> None:
        """An I/O error at ``path``: the first one in a log dir takes that dir offline."""
        log_dir = self.log_dir_of(path)
        if log_dir is None:
            _log.error("I/O error outside every log dir at %s: %s", path, cause)
            return
        if is_resource_exhaustion(cause):
            _log.error("I/O in log dir %s failed for want of resources (%s); the dir stays online", log_dir, cause)
            return
        with self._lock:
            first = log_dir not in self._offline
            if first:
                self._offline.append(log_dir)
        if not first:
            _log.debug("another I/O error in the offline log dir %s: %s", log_dir, cause)
            return
        _log.error("log dir %s failed (%s): its partitions go offline on this broker", log_dir, cause)
        if self.on_failure is not None:
            self.on_failure(log_dir)


def reports_io_errors(method: F) -> F:
    """Decorate a method of an object with ``_io_failed(exc, action) -> LogDirError``: an ``OSError`` or
    ``LogDirError`` raised inside is reported to its log dir's channel and raised as a ``LogDirError``."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except LogDirError as exc:
            raise self._io_failed(exc, method.__name__) from exc.__cause__
        except OSError as exc:
            raise self._io_failed(exc, method.__name__) from exc

    return guarded  # type: ignore[return-value]

"""Errors of the ZooKeeper layer: the server launcher, the session, the znode codecs."""

from __future__ import annotations

from broker_core.cluster.errors import MetadataError


class ZooKeeperServerError(Exception):
    """The ZooKeeper server cannot be started or stopped; the message is one line saying why.

    Raised when no ``java`` is found, the ZooKeeper jars are missing, the port
    is taken, or the process exits or stays silent while starting.
    """


class ZooKeeperUnavailableError(MetadataError):
    """ZooKeeper did not answer in time (no connection, or the session expired).

    The operation may or may not have been applied; the caller retries after
    re-reading, as it would after a :class:`StaleVersionError`.
    """


class ZooKeeperAuthenticationError(MetadataError):
    """ZooKeeper rejected the broker's SASL login; the message names the user and the JAAS file.

    Not retried: the credentials will not get better by waiting.
    """


class ZNodeDecodeError(MetadataError):
    """A znode's data does not decode as the layout of its path; the message names the path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"znode {path}: {reason}")
        self.path = path
        self.reason = reason

"""Which ACL a new znode gets: Kafka's rule (``ZkData.defaultAcls``).

With ``zookeeper.set.acl=false`` every znode is open to all
(``world:anyone`` ALL), ZooKeeper's default. With ``zookeeper.set.acl=true``:

* every znode gets ``auth`` ALL: ZooKeeper expands it to the creating
  session's authenticated identities, here ``sasl:<user>`` — only brokers
  logged in as that user may change or delete it;
* and ``world:anyone`` READ, except under the sensitive roots, which hold
  credentials and broker secrets: ``/config/users`` (SCRAM credentials),
  ``/config/brokers`` and ``/delegation_token/tokens``;
* ``/consumers`` (the old consumers' root, where they wrote themselves)
  stays open, as in Kafka.

Paths are relative to the chroot, as Kafka's are. ZooKeeper does not inherit
ACLs: the rule applies to each znode as it is created, parents included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kazoo.client import TransactionRequest
from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

SENSITIVE_ROOT_PATHS = ("/config/users", "/config/brokers", "/delegation_token/tokens")
OLD_CONSUMERS_PATH = "/consumers"


def is_sensitive_path(path: str) -> bool:
    """Kafka's ``sensitivePath``: a prefix test, as Kafka's ``startsWith``."""
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def default_acls(path: str, *, secure: bool) -> list[ACL]:
    """The ACL for a znode created at ``path``; ``secure`` is ``zookeeper.set.acl``."""
    if not secure or path == OLD_CONSUMERS_PATH:
        return list(OPEN_ACL_UNSAFE)
    if is_sensitive_path(path):
        return list(CREATOR_ALL_ACL)
    return list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)


@dataclass(frozen=True)
class ZnodeAcls:
    """The ACL choice of one session: ``None`` (ZooKeeper's open default) unless ``secure``."""

    secure: bool = False

    def for_path(self, path: str) -> list[ACL] | None:
        return default_acls(path, secure=True) if self.secure else None

    def transaction(self, transaction: TransactionRequest) -> TransactionRequest | AclTransaction:
        return AclTransaction(transaction, self) if self.secure else transaction


class AclTransaction:
    """A kazoo transaction whose ``create`` steps get :func:`default_acls` unless given an ACL."""

    def __init__(self, transaction: TransactionRequest, acls: ZnodeAcls) -> None:
        self._transaction = transaction
        self._acls = acls

    def create(self, path: str, value: bytes = b"", acl: list[ACL] | None = None, ephemeral: bool = False,
               sequence: bool = False) -> None:
        chosen = acl if acl is not None else self._acls.for_path(path)
        self._transaction.create(path, value, acl=chosen, ephemeral=ephemeral, sequence=sequence)

    def __getattr__(self, name: str) -> Any:
        # delete, set_data, check, commit, commit_async: the transaction's own.
        return getattr(self._transaction, name)

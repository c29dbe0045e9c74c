"""Which broker coordinates a consumer group or a transactional id (FindCoordinator).

:class:`CoordinatorKey` names the coordinator wanted; :func:`find_coordinator`
asks any broker for it and waits for the answer. The transactional
producer's asynchronous lookup is a request handler of its own
(``producer/txn_requests.py``) and the consumer's is
``consumer/coordinator_lookup.py``; both use the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.find_coordinator import KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION, FindCoordinatorRequest


@dataclass(frozen=True, slots=True)
class CoordinatorKey:
    """Which coordinator a request goes to: a transactional id's or a group's."""

    key_type: int
    key: str

    @classmethod
    def transaction(cls, transactional_id: str) -> CoordinatorKey:
        return cls(KEY_TYPE_TRANSACTION, transactional_id)

    @classmethod
    def group(cls, group_id: str) -> CoordinatorKey:
        return cls(KEY_TYPE_GROUP, group_id)

    @property
    def owner(self) -> str:
        """Whose coordinator it is, as messages say it: ``group 'g'``, or the quoted transactional id."""
        return f"group {self.key!r}" if self.key_type == KEY_TYPE_GROUP else repr(self.key)

    def __str__(self) -> str:
        kind = "transaction" if self.key_type == KEY_TYPE_TRANSACTION else "group"
        return f"{kind} coordinator of {self.key!r}"


def find_coordinator(network: NetworkClient, key: CoordinatorKey, deadline: float) -> int:
    """The coordinator's node id; a KafkaError (retriable while the cluster is settling) otherwise.

    A coordinator the cached metadata does not list yet is looked up in fresh metadata.
    """
    # key_type arrived in FindCoordinator v1; a group's key works with v0 as well.
    min_version = None if key.key_type == KEY_TYPE_GROUP else 1
    _, response = network.request(
        network.any_node(),
        ApiKey.FIND_COORDINATOR,
        FindCoordinatorRequest(key=key.key, key_type=key.key_type),
        deadline=deadline,
        min_version=min_version,
    )
    code = ErrorCode.of(response.error_code)
    if code != ErrorCode.NONE:
        raise KafkaError(code, response.error_message or f"find the coordinator of {key.owner}")
    if network.node(response.node_id) is None:
        network.fetch_metadata([], deadline=deadline)
        if network.node(response.node_id) is None:
            raise KafkaError(
                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"coordinator {response.node_id} of {key.owner} is not in the cluster metadata",
            )
    return int(response.node_id)

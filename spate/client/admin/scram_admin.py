"""SCRAM users through the admin client: DescribeUserScramCredentials and AlterUserScramCredentials.

A password never leaves the client: an upsertion sends a fresh random salt and
``Hi(password, salt, iterations)`` (PBKDF2 with the mechanism's hash), as
Kafka's AdminClient does, and the broker derives the keys it stores.
Per-user refusals are collected into one :class:`AdminError`.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Iterable

from spate.client.errors import AdminError
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.alter_user_scram_credentials import AlterUserScramCredentialsRequest
from spate.protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest

SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
MECHANISM_NAMES = {type_id: name for name, (type_id, _) in SCRAM_MECHANISMS.items()}
DEFAULT_ITERATIONS = 4096
SALT_BYTES = 32


@dataclass(frozen=True)
class ScramCredentialInfo:
    mechanism: str
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialUpsertion:
    user: str
    mechanism: str
    password: str
    iterations: int = DEFAULT_ITERATIONS

    def __repr__(self) -> str:
        return f"UserScramCredentialUpsertion({self.user!r}, {self.mechanism!r}, iterations={self.iterations})"


@dataclass(frozen=True)
class UserScramCredentialDeletion:
    user: str
    mechanism: str


def _mechanism(name: str) -> tuple[int, str]:
    try:
        return SCRAM_MECHANISMS[name.upper()]
    except KeyError:
        raise ValueError(f"unknown SCRAM mechanism {name!r}; use SCRAM-SHA-256 or SCRAM-SHA-512") from None


class ScramAdmin:
    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def describe(self, users: Iterable[str] | None, deadline: float) -> dict[str, list[ScramCredentialInfo]]:
        names = None if users is None else [DescribeUserScramCredentialsRequest.UserName(name=u) for u in users]

        def attempt(deadline: float) -> dict[str, list[ScramCredentialInfo]]:
            _, response = self._network.request(self._network.any_node(), ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
                                                DescribeUserScramCredentialsRequest(users=names), deadline=deadline)
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(ErrorCode.of(response.error_code), response.error_message or "describe users")
            found, errors = {}, {}
            for result in response.results:
                if result.error_code != ErrorCode.NONE:
                    errors[result.user] = KafkaError(ErrorCode.of(result.error_code), result.error_message or "")
                    continue
                found[result.user] = [ScramCredentialInfo(MECHANISM_NAMES.get(info.mechanism, str(info.mechanism)),
                                                          info.iterations) for info in result.credential_infos]
            if errors:
                raise AdminError("describe_user_scram_credentials", errors)
            return found

        return self._retrier.call("describe_user_scram_credentials", attempt, deadline)

    def alter(self, changes: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
              deadline: float) -> None:
        R = AlterUserScramCredentialsRequest
        deletions, upsertions = [], []
        for change in changes:
            type_id, hash_name = _mechanism(change.mechanism)
            if isinstance(change, UserScramCredentialDeletion):
                deletions.append(R.ScramCredentialDeletion(name=change.user, mechanism=type_id))
                continue
            salt = secrets.token_bytes(SALT_BYTES)
            salted = hashlib.pbkdf2_hmac(hash_name, change.password.encode(), salt, change.iterations)
            upsertions.append(R.ScramCredentialUpsertion(name=change.user, mechanism=type_id,
                                                         iterations=change.iterations, salt=salt,
                                                         salted_password=salted))
        request = R(deletions=deletions, upsertions=upsertions)

        def attempt(deadline: float) -> None:
            _, response = self._network.request(self._network.any_node(), ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
                                                request, deadline=deadline)
            errors = {r.user: KafkaError(ErrorCode.of(r.error_code), r.error_message or "")
                      for r in response.results if r.error_code != ErrorCode.NONE}
            if errors:
                raise AdminError("alter_user_scram_credentials", errors)

        self._retrier.call("alter_user_scram_credentials", attempt, deadline)

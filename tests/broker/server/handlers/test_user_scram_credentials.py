"""AlterUserScramCredentials / DescribeUserScramCredentials handlers: Kafka's per-user answers."""

from __future__ import annotations

import hashlib
from pathlib import Path

from broker_core.security.credentials import FileScramCredentialStore
from broker_core.security.sasl.scram import SCRAM_SHA_512
from broker_core.server.handlers.alter_user_scram_credentials import alter
from broker_core.server.handlers.describe_user_scram_credentials import describe
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.alter_user_scram_credentials import AlterUserScramCredentialsRequest as Alter
from spate.protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest as Describe


def upsert(name: str, mechanism: int = 2, iterations: int = 4096, password: bytes = b"pw") -> object:
    salted = hashlib.pbkdf2_hmac("sha512" if mechanism == 2 else "sha256", password, b"salt", max(iterations, 1))
    return Alter.ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations, salt=b"salt",
                                          salted_password=salted)


def errors(response: object) -> dict[str, int]:
    return {r.user: r.error_code for r in response.results}


def test_an_upsertion_stores_a_credential_that_checks_the_password(tmp_path: Path) -> None:
    store = FileScramCredentialStore(tmp_path)
    assert errors(alter(store, Alter(deletions=[], upsertions=[upsert("amy")]))) == {"amy": 0}
    assert store.get("amy", SCRAM_SHA_512).matches_password(SCRAM_SHA_512, "pw")


def test_each_user_gets_its_first_error_and_keeps_nothing(tmp_path: Path) -> None:
    store = FileScramCredentialStore(tmp_path)
    response = alter(store, Alter(
        deletions=[Alter.ScramCredentialDeletion(name="twice", mechanism=2),
                   Alter.ScramCredentialDeletion(name="ghost", mechanism=1)],
        upsertions=[upsert("twice"), upsert("weak", iterations=1000), upsert("odd", mechanism=9), upsert(""),
                    upsert("fine")],
    ))
    assert errors(response) == {
        "twice": ErrorCode.DUPLICATE_RESOURCE, "ghost": ErrorCode.RESOURCE_NOT_FOUND,
        "weak": ErrorCode.UNACCEPTABLE_CREDENTIAL, "odd": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        "": ErrorCode.UNACCEPTABLE_CREDENTIAL, "fine": ErrorCode.NONE,
    }
    assert set(store.describe()) == {"fine"}


def test_describe_lists_everyone_or_names_the_missing(tmp_path: Path) -> None:
    store = FileScramCredentialStore(tmp_path)
    alter(store, Alter(deletions=[], upsertions=[upsert("amy", iterations=8192)]))
    everyone = describe(store, Describe(users=None))
    assert [(r.user, [(i.mechanism, i.iterations) for i in r.credential_infos]) for r in everyone.results] == \
        [("amy", [(2, 8192)])]
    named = describe(store, Describe(users=[Describe.UserName(name="amy"), Describe.UserName(name="bo"),
                                            Describe.UserName(name="bo")]))
    assert errors(named) == {"amy": 0, "bo": ErrorCode.DUPLICATE_RESOURCE}
    assert errors(describe(store, Describe(users=[Describe.UserName(name="cy")]))) == \
        {"cy": ErrorCode.RESOURCE_NOT_FOUND}

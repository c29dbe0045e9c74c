"""DescribeUserScramCredentials and AlterUserScramCredentials: flexible v0 bytes, both ways."""

from __future__ import annotations

import pytest

from spate.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
from spate.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

DescribeRq, DescribeRs = DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
AlterRq, AlterRs = AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse

CASES = [
    # null users: every user
    (DescribeRq(users=None), "00" "00"),
    (DescribeRq(users=[DescribeRq.UserName(name="alice")]), "02" "06616c696365" "00" "00"),
    (
        DescribeRs(throttle_time_ms=0, error_code=0, results=[DescribeRs.DescribeUserScramCredentialsResult(
            user="bob", error_code=0, credential_infos=[DescribeRs.CredentialInfo(mechanism=2, iterations=4096)])]),
        "00000000" "0000" "00" "02" "04626f62" "0000" "00" "02" "02" "00001000" "00" "00" "00",
    ),
    (
        AlterRq(deletions=[AlterRq.ScramCredentialDeletion(name="bob", mechanism=1)], upsertions=[
            AlterRq.ScramCredentialUpsertion(name="al", mechanism=2, iterations=8192, salt=b"\x01\x02",
                                             salted_password=b"\xff")]),
        "02" "04626f62" "01" "00" "02" "03616c" "02" "00002000" "030102" "02ff" "00" "00",
    ),
    (
        AlterRs(throttle_time_ms=5, results=[AlterRs.AlterUserScramCredentialsResult(
            user="bob", error_code=91, error_message="gone")]),
        "00000005" "02" "04626f62" "005b" "05676f6e65" "00" "00",
    ),
]


@pytest.mark.parametrize("message, wire", CASES)
def test_encodes_to_kafkas_bytes_and_back(message, wire: str) -> None:
    data = bytes.fromhex(wire)
    assert message.encode(0) == data
    assert type(message).decode(data, 0) == message

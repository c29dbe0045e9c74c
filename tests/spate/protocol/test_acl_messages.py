"""CreateAcls, DescribeAcls and DeleteAcls bytes, both ways, at a non-flexible and a flexible version."""

from __future__ import annotations

from spate.protocol.messages.acls import CreateAclsRequest, DeleteAclsResponse, DescribeAclsRequest


def _s(text: str) -> str:
    return len(text).to_bytes(2, "big").hex() + text.encode().hex()


def _cs(text: str) -> str:  # compact string: length + 1 as an unsigned varint (short strings: one byte)
    return (len(text) + 1).to_bytes(1, "big").hex() + text.encode().hex()


CREATION = CreateAclsRequest.AclCreation(resource_type=2, resource_name="orders", resource_pattern_type=4,
                                         principal="User:alice", host="*", operation=3, permission_type=3)


def test_create_acls_v1_is_classic_strings_with_the_pattern_type() -> None:
    value = CreateAclsRequest(creations=[CREATION])
    expected = "00000001" + "02" + _s("orders") + "04" + _s("User:alice") + _s("*") + "03" + "03"
    assert value.encode(1).hex() == expected
    assert CreateAclsRequest.decode(bytes.fromhex(expected), 1) == value


def test_create_acls_v0_has_no_pattern_type_and_decodes_as_literal() -> None:
    encoded = "00000001" + "02" + _s("orders") + _s("User:alice") + _s("*") + "03" + "03"
    decoded = CreateAclsRequest.decode(bytes.fromhex(encoded), 0)
    assert decoded.creations[0].resource_pattern_type == 3


def test_create_acls_v2_is_flexible() -> None:
    value = CreateAclsRequest(creations=[CREATION])
    expected = "02" + "02" + _cs("orders") + "04" + _cs("User:alice") + _cs("*") + "03" + "03" + "00" + "00"
    assert value.encode(2).hex() == expected
    assert CreateAclsRequest.decode(bytes.fromhex(expected), 2) == value


def test_describe_acls_filter_with_null_names_round_trips() -> None:
    value = DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                                principal_filter=None, host_filter=None, operation=1, permission_type=1)
    for version in range(1, 4):  # v0 has no pattern type: it means LITERAL
        assert DescribeAclsRequest.decode(value.encode(version), version) == value


def test_delete_acls_response_round_trips_at_every_version() -> None:
    R = DeleteAclsResponse
    matching = R.DeleteAclsMatchingAcl(error_code=0, error_message=None, resource_type=3, resource_name="g",
                                       pattern_type=3, principal="User:bob", host="10.0.0.1", operation=3,
                                       permission_type=2)
    value = R(throttle_time_ms=0, filter_results=[
        R.DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[matching])])
    for version in range(4):
        assert R.decode(value.encode(version), version) == value

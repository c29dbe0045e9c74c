"""What every command shares: argument types, byte decoding, and the connection arguments' failures."""

from __future__ import annotations

import argparse

import pytest

from spate.cli.common import decoded, describe_admin_error, key_value, non_negative_int, positive_int
from spate.client.admin.admin_types import ConfigResource
from spate.client.errors import AdminError
from spate.protocol.errors import ErrorCode, KafkaError
from tests.spate.cli.conftest import assert_one_line_failure, spate


def test_decoded_gives_text_for_utf8_and_marked_base64_otherwise() -> None:
    assert decoded(b"h\xc3\xa9") == "hé"
    assert decoded(b"\xff") == {"base64": "/w=="}
    assert decoded(None) is None


def test_key_value_splits_at_the_first_equals_sign() -> None:
    assert key_value("a=b=c") == ("a", "b=c")
    assert key_value("empty=") == ("empty", "")


@pytest.mark.parametrize("text", ["novalue", "=v"])
def test_key_value_rejects_a_missing_key_or_equals_sign(text) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        key_value(text)


def test_number_types_reject_out_of_range_and_non_numbers() -> None:
    assert positive_int(" 3 ") == 3 and non_negative_int("0") == 0
    for parse, bad in ((positive_int, "0"), (non_negative_int, "-1"), (positive_int, "x")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(bad)


# --- --bootstrap-server and --api-timeout-ms ----------------------------------------------------


@pytest.mark.integration
def test_an_unreachable_broker_fails_within_the_api_timeout(refused_address) -> None:
    result = spate("topics", "list", "--bootstrap-server", refused_address, "--api-timeout-ms", "500")
    assert_one_line_failure(result, 1, refused_address)


@pytest.mark.integration
def test_a_malformed_bootstrap_address_is_a_usage_error() -> None:
    assert_one_line_failure(spate("topics", "list", "--bootstrap-server", "nohostport"), 2, "nohostport")


def test_a_refused_broker_config_names_the_broker_or_the_defaults() -> None:
    refused = KafkaError(ErrorCode.INVALID_CONFIG, "Cannot update these configs dynamically")
    error = AdminError("alter configs", {ConfigResource.broker(""): refused, ConfigResource.broker(2): refused,
                                         ConfigResource.topic("orders"): refused})
    assert describe_admin_error(error).split("; ") == [
        "the brokers' defaults: INVALID_CONFIG: Cannot update these configs dynamically",
        "broker 2: INVALID_CONFIG: Cannot update these configs dynamically",
        "orders: INVALID_CONFIG: Cannot update these configs dynamically",
    ]

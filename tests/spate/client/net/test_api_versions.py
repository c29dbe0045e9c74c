"""Each request is sent at the highest version both the client and the broker support."""

from __future__ import annotations

import pytest

from spate.client.errors import UnsupportedApiError
from spate.client.net.api_versions import (
    CLIENT_VERSIONS,
    broker_versions,
    choose_version,
)
from spate.protocol import ADVERTISED_VERSIONS, ApiKey, VersionRange
from spate.protocol.messages.api_versions import api_versions_response


def test_the_highest_version_inside_both_ranges_is_chosen() -> None:
    broker = {ApiKey.FETCH: VersionRange(0, 17)}
    assert choose_version(ApiKey.FETCH, broker) == CLIENT_VERSIONS[ApiKey.FETCH].max


def test_an_older_broker_caps_the_version() -> None:
    assert choose_version(ApiKey.PRODUCE, {ApiKey.PRODUCE: VersionRange(0, 5)}) == 5


def test_a_minimum_version_raises_the_floor() -> None:
    broker = {ApiKey.LIST_OFFSETS: VersionRange(0, 1)}
    assert choose_version(ApiKey.LIST_OFFSETS, broker) == 1
    with pytest.raises(UnsupportedApiError, match="v2\\+ of LIST_OFFSETS"):
        choose_version(ApiKey.LIST_OFFSETS, broker, min_version=2)


def test_a_maximum_version_caps_it() -> None:
    assert choose_version(ApiKey.METADATA, {ApiKey.METADATA: VersionRange(0, 12)}, max_version=4) == 4


def test_disjoint_ranges_are_refused_with_both_ranges_named() -> None:
    with pytest.raises(UnsupportedApiError, match="broker serves v0-2.*client speaks v3-7"):
        choose_version(ApiKey.PRODUCE, {ApiKey.PRODUCE: VersionRange(0, 2)})


def test_an_api_the_broker_does_not_list_is_refused() -> None:
    with pytest.raises(UnsupportedApiError, match="does not serve CREATE_PARTITIONS"):
        choose_version(ApiKey.CREATE_PARTITIONS, {ApiKey.PRODUCE: VersionRange(3, 7)})


def test_an_api_the_client_does_not_speak_is_refused() -> None:
    with pytest.raises(UnsupportedApiError, match="client does not speak"):
        choose_version(ApiKey.VOTE, {ApiKey.VOTE: VersionRange(0, 1)})


def test_every_api_spate_advertises_has_a_common_version_with_its_own_client() -> None:
    broker = broker_versions(api_versions_response(ADVERTISED_VERSIONS))
    for key, advertised in ADVERTISED_VERSIONS.items():
        # The client stops at the last version it builds requests for.
        assert choose_version(key, broker) == min(advertised.max, CLIENT_VERSIONS[key].max)

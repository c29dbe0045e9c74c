"""Choosing the version of each API to speak to a broker (ApiVersions negotiation).

The client speaks every version the protocol package declares. A broker
advertises a range per API in its ApiVersions response; for each request the
client uses the highest version inside both ranges. A broker that does not
know the ApiVersions version asked for answers UNSUPPORTED_VERSION together
with its own table, and the client retries at the best version in it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from spate.client.errors import UnsupportedApiError
from spate.protocol import REQUESTS, ApiKey, VersionRange

# Where the protocol package declares newer versions than this client builds requests for
# (the broker serves them to other clients), the client stops at the last version it builds.
_BUILT_UP_TO = {
    ApiKey.PRODUCE: 7,
    ApiKey.FETCH: 11,
    ApiKey.LIST_OFFSETS: 5,
    ApiKey.METADATA: 8,
    ApiKey.OFFSET_FETCH: 5,
    ApiKey.FIND_COORDINATOR: 2,
    ApiKey.DELETE_RECORDS: 1,
    ApiKey.TXN_OFFSET_COMMIT: 2,
    # v4+ is a broker's request (a batch of transactions to verify), not a producer's.
    ApiKey.ADD_PARTITIONS_TO_TXN: 3,
    ApiKey.DESCRIBE_CONFIGS: 2,
    ApiKey.DELETE_TOPICS: 5,
    # v4 only lets a broker report features whose lowest version is 0; the client reads no features.
    ApiKey.API_VERSIONS: 3,
}

# The oldest versions the client builds requests for: older ones carry legacy message sets (Produce,
# Fetch) or answers in older shapes, which the broker serves to old clients only.
_BUILT_FROM = {
    ApiKey.PRODUCE: 3,
    ApiKey.FETCH: 4,
    ApiKey.LIST_OFFSETS: 1,
    ApiKey.OFFSET_COMMIT: 2,
    ApiKey.OFFSET_FETCH: 1,
}

CLIENT_VERSIONS: Mapping[ApiKey, VersionRange] = MappingProxyType(
    {
        key: VersionRange(
            max(schema.versions.min, _BUILT_FROM.get(key, schema.versions.min)),
            min(schema.versions.max, _BUILT_UP_TO.get(key, schema.versions.max)),
        )
        for key, schema in REQUESTS.items()
    }
)


def broker_versions(body: Any) -> dict[int, VersionRange]:
    """The ranges an ApiVersionsResponse advertises, by API key."""
    return {entry.api_key: VersionRange(entry.min_version, entry.max_version) for entry in body.api_keys}


def choose_version(
    api_key: int,
    broker: Mapping[int, VersionRange],
    *,
    client: Mapping[ApiKey, VersionRange] = CLIENT_VERSIONS,
    min_version: int | None = None,
    max_version: int | None = None,
) -> int:
    """The highest version of ``api_key`` both sides support, within the optional bounds.

    ``min_version`` is for callers that need a field introduced in a given
    version (ListOffsets needs v2 for read_committed); ``max_version`` caps
    it. Raises :class:`UnsupportedApiError` when no version qualifies.
    """
    name = ApiKey.name_of(api_key)
    ours = client.get(api_key)  # type: ignore[call-overload]
    theirs = broker.get(api_key)
    if ours is None:
        raise UnsupportedApiError(f"this client does not speak {name}")
    if theirs is None:
        raise UnsupportedApiError(f"the broker does not serve {name}")
    low = max(ours.min, theirs.min, min_version if min_version is not None else 0)
    high = min(ours.max, theirs.max, max_version if max_version is not None else ours.max)
    if low > high:
        wanted = f"v{min_version}+ of " if min_version is not None else ""
        raise UnsupportedApiError(
            f"no common version for {wanted}{name}: the broker serves v{theirs.min}-{theirs.max}, "
            f"this client speaks v{ours.min}-{ours.max}"
        )
    return high

"""The message browser's query: where to start reading, how much, shown how."""

from __future__ import annotations

import pytest

from spate.console.actions import ActionRefused
from spate.console.browse_query import parse_browse_query, parse_timestamp
from spate.console.cluster_view import BROWSE_LIMIT_MAX


def test_no_offset_and_no_time_means_the_newest_records() -> None:
    query = parse_browse_query({})
    assert (query.partition, query.offset, query.timestamp_ms, query.limit, query.format) == (0, None, None, 50, "auto")


def test_times_are_milliseconds_or_iso_8601_in_utc_by_default() -> None:
    assert parse_timestamp("1700000000000") == 1_700_000_000_000
    assert parse_timestamp("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_timestamp("2023-11-14T22:13:20") == 1_700_000_000_000
    assert parse_timestamp("2023-11-15T00:13:20+02:00") == 1_700_000_000_000


def test_a_bad_time_is_refused_by_name() -> None:
    with pytest.raises(ActionRefused, match="neither milliseconds nor an ISO-8601"):
        parse_timestamp("yesterday")


def test_the_limit_is_kept_within_bounds() -> None:
    assert parse_browse_query({"limit": "100000"}).limit == BROWSE_LIMIT_MAX


@pytest.mark.parametrize("query, message", [
    ({"offset": "-1"}, "offset must not be negative"),
    ({"partition": "x"}, "partition must be a whole number"),
    ({"format": "yaml"}, "format must be one of auto, text, json, hex"),
])
def test_bad_queries_are_refused(query: dict[str, str], message: str) -> None:
    with pytest.raises(ActionRefused, match=message):
        parse_browse_query(query)

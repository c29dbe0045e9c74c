"""The cluster APIs at every declared version: any value round-trips, and versions keep only their fields.

Values come from hypothesis, drawn from the declarations (see
``declared_values``); the per-API files hold the hand-built frames.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.schema import MessageSchema
from tests.spate.protocol.declared_values import kept_by, values

CLUSTER_APIS = [
    ApiKey.LEADER_AND_ISR,
    ApiKey.STOP_REPLICA,
    ApiKey.UPDATE_METADATA,
    ApiKey.CONTROLLED_SHUTDOWN,
    ApiKey.WRITE_TXN_MARKERS,
    ApiKey.ELECT_LEADERS,
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS,
    ApiKey.LIST_PARTITION_REASSIGNMENTS,
    ApiKey.DESCRIBE_CLUSTER,
]

CASES = [
    pytest.param(table[key], version, id=f"{table[key].name}-v{version}")
    for key in CLUSTER_APIS
    for table in (REQUESTS, RESPONSES)
    for version in range(table[key].versions.min, table[key].versions.max + 1)
]

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("schema", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_any_value_of_a_version_round_trips(schema: MessageSchema, version: int, data: st.DataObject) -> None:
    value = data.draw(values(schema, version))
    encoded = schema.encode(value, version)
    decoded = schema.decode(encoded, version)
    assert decoded == value
    assert schema.encode(decoded, version) == encoded


@pytest.mark.parametrize(("schema", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_fields_absent_from_a_version_decode_as_their_defaults(
    schema: MessageSchema, version: int, data: st.DataObject
) -> None:
    """A value built for any version, sent at ``version``, comes back with only ``version``'s fields."""
    built_for = data.draw(st.integers(schema.versions.min, schema.versions.max), label="built_for")
    value = data.draw(values(schema, built_for))
    decoded = schema.decode(schema.encode(value, version), version)
    assert decoded == kept_by(value, schema, version)


@pytest.mark.parametrize(("schema", "version"), CASES)
def test_default_values_round_trip(schema: MessageSchema, version: int) -> None:
    value = schema.classes[schema.name]()
    assert schema.decode(schema.encode(value, version), version) == value


def test_flexible_versions_are_kafkas() -> None:
    first_flexible = {
        ApiKey.LEADER_AND_ISR: 4,
        ApiKey.STOP_REPLICA: 2,
        ApiKey.UPDATE_METADATA: 6,
        ApiKey.CONTROLLED_SHUTDOWN: 3,
        ApiKey.WRITE_TXN_MARKERS: 1,
        ApiKey.ELECT_LEADERS: 2,
        ApiKey.INCREMENTAL_ALTER_CONFIGS: 1,
        ApiKey.ALTER_PARTITION_REASSIGNMENTS: 0,
        ApiKey.LIST_PARTITION_REASSIGNMENTS: 0,
        ApiKey.DESCRIBE_CLUSTER: 0,
    }
    for key in CLUSTER_APIS:
        for table in (REQUESTS, RESPONSES):
            assert table[key].flexible_from == first_flexible[key], table[key].name

"""The cluster calls of the admin client against a scripted broker: what they send, what they return, what fails.

DescribeCluster (or Metadata from a broker without it), ElectLeaders,
AlterPartitionReassignments, ListPartitionReassignments and
IncrementalAlterConfigs, each checked for its request body and version,
its answer mapping and its per-partition or per-resource errors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spate.client import (
    Admin,
    AdminError,
    AlterConfigOp,
    ConfigResource,
    ErrorCode,
    KafkaError,
    PartitionReassignment,
    TopicPartition,
    UnsupportedApiError,
)
from spate.client.admin.admin_types import AlterConfigOpType, ElectionType
from spate.protocol import ApiKey, VersionRange
from tests.spate.client.admin.fake_cluster import (
    FakeCluster,
    FakePartition,
    config_change_response,
    describe_cluster_response,
    election_response,
    reassignment_response,
    reassignments_listing,
    without,
)

E = ErrorCode
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def admin_for(cluster: FakeCluster, timeout_ms: int = 3_000) -> Admin:
    return Admin(cluster.bootstrap, default_api_timeout_ms=timeout_ms, request_timeout_ms=timeout_ms,
                 retry_backoff_ms=5, retry_backoff_max_ms=20)


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(brokers=(0, 1, 2), controller=1, racks={0: "r0"},
                     topics={"t": [FakePartition(0, (0, 1)), FakePartition(1, (1, 2))], "u": [FakePartition(2, (2,))]}) as fake:
        yield fake


# --- describe_cluster -----------------------------------------------------------------------------


def test_describe_cluster_asks_describe_cluster_when_the_broker_serves_it(cluster) -> None:
    cluster.answers[ApiKey.DESCRIBE_CLUSTER] = lambda version, body: describe_cluster_response(
        {2: ("h2", 9094, None), 0: ("h0", 9092, "rack-a")}, controller=2, cluster_id="abc"
    )
    with admin_for(cluster) as admin:
        described = admin.describe_cluster()
    assert described.cluster_id == "abc" and described.controller_id == 2
    assert [(b.node_id, b.address, b.rack) for b in described.brokers] == [(0, "h0:9092", "rack-a"), (2, "h2:9094", None)]
    [(version, body)] = cluster.sent(ApiKey.DESCRIBE_CLUSTER)
    assert version == 1 and body.include_cluster_authorized_operations is False and body.endpoint_type == 1
    assert cluster.sent(ApiKey.METADATA) == []


def test_describe_cluster_reads_metadata_from_a_broker_without_describe_cluster() -> None:
    with FakeCluster(brokers=(0, 1), controller=1, racks={1: "r1"}, versions=without(ApiKey.DESCRIBE_CLUSTER)) as fake:
        with admin_for(fake) as admin:
            described = admin.describe_cluster()
        assert described.cluster_id == "fake-cluster" and described.controller_id == 1
        assert [(b.node_id, b.rack) for b in described.brokers] == [(0, None), (1, "r1")]
        assert fake.sent(ApiKey.DESCRIBE_CLUSTER) == []
        assert len(fake.sent(ApiKey.METADATA)) == 1


def test_describe_cluster_raises_the_brokers_refusal(cluster) -> None:
    cluster.answers[ApiKey.DESCRIBE_CLUSTER] = lambda version, body: describe_cluster_response(
        {}, controller=-1, code=E.CLUSTER_AUTHORIZATION_FAILED
    )
    with admin_for(cluster) as admin, pytest.raises(KafkaError) as raised:
        admin.describe_cluster()
    assert raised.value.code == E.CLUSTER_AUTHORIZATION_FAILED


# --- elect_leaders --------------------------------------------------------------------------------


def test_elect_preferred_leaders_sends_the_partitions_by_topic_and_maps_each_answer(cluster) -> None:
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response(
        {("t", 0): E.NONE, ("t", 1): E.ELECTION_NOT_NEEDED, ("u", 0): E.NONE}
    )
    with admin_for(cluster) as admin:
        results = admin.elect_leaders("preferred", [U0, T1, T0])
    assert results == {T0: E.NONE, T1: E.ELECTION_NOT_NEEDED, U0: E.NONE}
    [(version, body)] = cluster.sent(ApiKey.ELECT_LEADERS)
    assert version == 2 and body.election_type == ElectionType.PREFERRED
    assert [(tp.topic, tp.partitions) for tp in body.topic_partitions] == [("t", [0, 1]), ("u", [0])]
    assert 0 < body.timeout_ms <= 3_000


def test_elect_leaders_of_every_partition_sends_null_and_returns_what_the_broker_names(cluster) -> None:
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response(
        {("u", 0): E.ELECTION_NOT_NEEDED, ("t", 1): E.NONE}
    )
    with admin_for(cluster) as admin:
        results = admin.elect_leaders()
    assert list(results.items()) == [(T1, E.NONE), (U0, E.ELECTION_NOT_NEEDED)]
    [(_, body)] = cluster.sent(ApiKey.ELECT_LEADERS)
    assert body.topic_partitions is None


def test_a_refused_election_is_an_admin_error_naming_only_that_partition(cluster) -> None:
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response(
        {("t", 0): E.NONE, ("t", 1): E.PREFERRED_LEADER_NOT_AVAILABLE}
    )
    with admin_for(cluster) as admin, pytest.raises(AdminError) as raised:
        admin.elect_leaders("preferred", [T0, T1])
    assert raised.value.code == E.PREFERRED_LEADER_NOT_AVAILABLE
    assert set(raised.value.errors) == {T1}
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in str(raised.value)
    assert len(cluster.sent(ApiKey.ELECT_LEADERS)) == 1, "per-partition refusals are not retried"


def test_a_partition_the_answer_leaves_out_fails(cluster) -> None:
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response({("t", 0): E.NONE})
    with admin_for(cluster) as admin, pytest.raises(AdminError) as raised:
        admin.elect_leaders("preferred", [T0, T1])
    assert set(raised.value.errors) == {T1} and raised.value.code == E.UNKNOWN_SERVER_ERROR


def test_unclean_election_needs_v1_and_sends_its_type(cluster) -> None:
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response({("t", 0): E.NONE})
    with admin_for(cluster) as admin:
        assert admin.elect_leaders("unclean", [T0]) == {T0: E.NONE}
    [(_, body)] = cluster.sent(ApiKey.ELECT_LEADERS)
    assert body.election_type == ElectionType.UNCLEAN


def test_a_v0_broker_elects_preferred_leaders_but_refuses_unclean_ones() -> None:
    versions = {**without(), ApiKey.ELECT_LEADERS: VersionRange(0, 0)}
    with FakeCluster(topics={"t": [FakePartition(0, (0,))]}, versions=versions) as fake:
        fake.answers[ApiKey.ELECT_LEADERS] = lambda version, body: election_response({("t", 0): E.ELECTION_NOT_NEEDED})
        with admin_for(fake) as admin:
            assert admin.elect_leaders("preferred", [T0]) == {T0: E.ELECTION_NOT_NEEDED}
            with pytest.raises(UnsupportedApiError):
                admin.elect_leaders("unclean", [T0])
        assert [version for version, _ in fake.sent(ApiKey.ELECT_LEADERS)] == [0]


def test_an_unknown_election_type_is_refused_before_anything_is_sent(cluster) -> None:
    with admin_for(cluster) as admin, pytest.raises(ValueError, match="unknown election type 'random'"):
        admin.elect_leaders("random", [T0])
    assert cluster.sent(ApiKey.ELECT_LEADERS) == []


def test_not_controller_refreshes_metadata_and_retries(cluster) -> None:
    answers = iter([election_response({}, code=E.NOT_CONTROLLER), election_response({("t", 0): E.NONE})])
    cluster.answers[ApiKey.ELECT_LEADERS] = lambda version, body: next(answers)
    with admin_for(cluster) as admin:
        assert admin.elect_leaders("preferred", [T0]) == {T0: E.NONE}
    kinds = [key for key, _, _ in cluster.requests]
    first = kinds.index(ApiKey.ELECT_LEADERS)
    assert kinds.count(ApiKey.ELECT_LEADERS) == 2
    assert ApiKey.METADATA in kinds[first + 1:], "the controller is looked up again after NOT_CONTROLLER"


def test_after_not_controller_the_call_goes_to_the_controller_the_metadata_names() -> None:
    """An older broker accepts the request only on the controller: the retry finds it."""
    with FakeCluster(controller=-1) as controller:
        with FakeCluster(brokers=(0,), controller=0) as other:
            other.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
                {}, code=E.NOT_CONTROLLER
            )
            controller.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
                {("t", 0): E.NONE}
            )

            def metadata(version, body):  # broker 0 is this one, broker 1 the controller
                response = other.metadata(body)
                response.brokers.append(type(response.brokers[0])(node_id=1, host="127.0.0.1", port=controller.port))
                response.controller_id = 1
                return response

            other.answers[ApiKey.METADATA] = metadata
            with admin_for(other) as admin:
                admin.alter_partition_reassignments({T0: [1]})
            assert len(other.sent(ApiKey.ALTER_PARTITION_REASSIGNMENTS)) == 1
            assert len(controller.sent(ApiKey.ALTER_PARTITION_REASSIGNMENTS)) == 1


# --- partition reassignments ----------------------------------------------------------------------


def test_alter_partition_reassignments_sends_new_replicas_and_null_for_a_cancel(cluster) -> None:
    cluster.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
        {("t", 0): E.NONE, ("t", 1): E.NONE, ("u", 0): E.NONE}
    )
    with admin_for(cluster) as admin:
        admin.alter_partition_reassignments({T1: None, U0: (2, 0), T0: [1, 2]})
    [(version, body)] = cluster.sent(ApiKey.ALTER_PARTITION_REASSIGNMENTS)
    assert version == 0 and 0 < body.timeout_ms <= 3_000
    sent = {(t.name, p.partition_index): p.replicas for t in body.topics for p in t.partitions}
    assert sent == {("t", 0): [1, 2], ("t", 1): None, ("u", 0): [2, 0]}


def test_reassignment_refusals_are_reported_per_partition_by_code_name(cluster) -> None:
    cluster.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
        {("t", 0): E.NONE, ("t", 1): E.NO_REASSIGNMENT_IN_PROGRESS, ("u", 0): E.INVALID_REPLICA_ASSIGNMENT}
    )
    with admin_for(cluster) as admin, pytest.raises(AdminError) as raised:
        admin.alter_partition_reassignments({T0: [1], T1: None, U0: [7]})
    assert {tp: e.code for tp, e in raised.value.errors.items()} == {
        T1: E.NO_REASSIGNMENT_IN_PROGRESS, U0: E.INVALID_REPLICA_ASSIGNMENT
    }
    assert raised.value.errors[T1].message == "cancel the reassignment of t-1"
    assert raised.value.errors[U0].message == "reassign u-0 to replicas [7]"


def test_a_top_level_reassignment_error_fails_every_partition(cluster) -> None:
    cluster.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
        {("t", 0): E.NONE, ("t", 1): E.NONE}, code=E.CLUSTER_AUTHORIZATION_FAILED, message="not allowed"
    )
    with admin_for(cluster) as admin, pytest.raises(AdminError) as raised:
        admin.alter_partition_reassignments({T0: [1], T1: [2]})
    assert set(raised.value.errors) == {T0, T1}
    assert all(e.code == E.CLUSTER_AUTHORIZATION_FAILED and e.message == "not allowed"
               for e in raised.value.errors.values())


def test_list_partition_reassignments_of_everything_sends_null_topics(cluster) -> None:
    cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing(
        {("u", 0): ([2, 0], [0], [2]), ("t", 1): ([1, 2], [], [])}
    )
    with admin_for(cluster) as admin:
        ongoing = admin.list_partition_reassignments()
    assert list(ongoing) == [T1, U0]
    assert ongoing[U0] == PartitionReassignment((2, 0), (0,), (2,))
    assert ongoing[U0].target_replicas == (0,)
    [(version, body)] = cluster.sent(ApiKey.LIST_PARTITION_REASSIGNMENTS)
    assert version == 0 and body.topics is None


def test_list_partition_reassignments_of_some_partitions_names_them_by_topic(cluster) -> None:
    cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing({})
    with admin_for(cluster) as admin:
        assert admin.list_partition_reassignments([U0, T1, T0, T0]) == {}
    [(_, body)] = cluster.sent(ApiKey.LIST_PARTITION_REASSIGNMENTS)
    assert [(t.name, t.partition_indexes) for t in body.topics] == [("t", [0, 1]), ("u", [0])]


def test_list_partition_reassignments_raises_a_refusal(cluster) -> None:
    cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing(
        {}, code=E.CLUSTER_AUTHORIZATION_FAILED
    )
    with admin_for(cluster) as admin, pytest.raises(KafkaError) as raised:
        admin.list_partition_reassignments()
    assert raised.value.code == E.CLUSTER_AUTHORIZATION_FAILED


# --- incremental_alter_configs --------------------------------------------------------------------


def test_incremental_alter_configs_sends_each_operation_with_its_code(cluster) -> None:
    cluster.answers[ApiKey.INCREMENTAL_ALTER_CONFIGS] = lambda version, body: config_change_response(body)
    resource = ConfigResource.topic("t")
    with admin_for(cluster) as admin:
        admin.incremental_alter_configs({resource: [
            AlterConfigOp("retention.ms", "1000"),
            AlterConfigOp("segment.ms", None, AlterConfigOp.OpType.DELETE),
            AlterConfigOp("cleanup.policy", "compact", "append"),
            AlterConfigOp("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT),
        ]}, validate_only=True)
    [(version, body)] = cluster.sent(ApiKey.INCREMENTAL_ALTER_CONFIGS)
    assert version == 1 and body.validate_only is True
    [sent] = body.resources
    assert (sent.resource_type, sent.resource_name) == (2, "t")
    assert [(c.name, c.config_operation, c.value) for c in sent.configs] == [
        ("retention.ms", 0, "1000"), ("segment.ms", 1, None), ("cleanup.policy", 2, "compact"),
        ("cleanup.policy", 3, "delete"),
    ]


def test_incremental_alter_configs_reports_each_refused_resource(cluster) -> None:
    cluster.answers[ApiKey.INCREMENTAL_ALTER_CONFIGS] = lambda version, body: config_change_response(
        body, errors={"u": E.INVALID_CONFIG}
    )
    ok, refused = ConfigResource.topic("t"), ConfigResource.topic("u")
    with admin_for(cluster) as admin, pytest.raises(AdminError) as raised:
        admin.incremental_alter_configs({ok: [AlterConfigOp("a", "1")], refused: [AlterConfigOp("b", "x")]})
    assert set(raised.value.errors) == {refused} and raised.value.code == E.INVALID_CONFIG


def test_incremental_alter_configs_of_a_broker_goes_to_that_broker(cluster) -> None:
    cluster.answers[ApiKey.INCREMENTAL_ALTER_CONFIGS] = lambda version, body: config_change_response(body)
    with admin_for(cluster) as admin:
        admin.incremental_alter_configs({ConfigResource.broker(2): [AlterConfigOp("log.retention.ms", "5")]})
    [(_, body)] = cluster.sent(ApiKey.INCREMENTAL_ALTER_CONFIGS)
    assert [(r.resource_type, r.resource_name) for r in body.resources] == [(4, "2")]


def test_a_broker_without_incremental_alter_configs_raises_unsupported_and_changes_nothing() -> None:
    with FakeCluster(versions=without(ApiKey.INCREMENTAL_ALTER_CONFIGS)) as fake:
        with admin_for(fake) as admin, pytest.raises(UnsupportedApiError):
            admin.incremental_alter_configs({ConfigResource.topic("t"): [AlterConfigOp("a", "1")]})
        assert fake.sent(ApiKey.INCREMENTAL_ALTER_CONFIGS) == []
        assert fake.sent(ApiKey.ALTER_CONFIGS) == []


# --- values ---------------------------------------------------------------------------------------


def test_alter_config_ops_need_a_value_except_delete() -> None:
    assert AlterConfigOp("k", op="delete").op == AlterConfigOpType.DELETE
    with pytest.raises(ValueError, match="SET of config 'k' needs a value"):
        AlterConfigOp("k")
    with pytest.raises(ValueError, match="unknown config operation 'replace'"):
        AlterConfigOp("k", "v", "replace")


def test_a_reassignment_target_leaves_out_the_replicas_being_removed() -> None:
    assert PartitionReassignment((1, 2, 3, 4), (3, 4), (1, 2)).target_replicas == (3, 4)
    assert PartitionReassignment((1, 2)).target_replicas == (1, 2)

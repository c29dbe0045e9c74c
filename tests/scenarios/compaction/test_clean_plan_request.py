"""The CleanPlan request on a real broker: a plan made outside the broker, sent in chunks to the leader, compacts
the partition exactly as planned; a plan that no longer fits the log is refused with its reason."""

from __future__ import annotations

import hashlib

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from spate.client.admin.clean_plans import CleanPlanClient, LogCleaningState
from spate.protocol import ErrorCode, KafkaError
from spate.structs import TopicPartition
from tests.scenarios.compaction.changelog import Changelog, create_compacted_topic, read_all, write_changelog
from tests.support.broker_process import BrokerProcess, running_broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TOPIC = "planned"
TP = TopicPartition(TOPIC, 0)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory):
    with running_broker(BrokerProcess(tmp_path_factory.mktemp("clean-plan"),
                                      overrides={"log.cleaner.backoff.ms": "200"})) as started:
        yield started


def plan_for(log: Changelog, state: LogCleaningState) -> dict[bytes, int]:
    latest: dict[bytes, int] = {}
    for offset, key, _ in log.entries:
        if state.first_dirty_offset <= offset < state.clean_end_offset:
            latest[hashlib.md5(key).digest()] = offset
    return latest


@pytest.fixture(scope="module")
def changelog(broker: BrokerProcess) -> Changelog:
    create_compacted_topic(broker.bootstrap, TOPIC, **{"segment.bytes": "65536", "spate.compaction.planner": "spark"})
    return write_changelog(broker.bootstrap, TOPIC, records=20_000, keys=500, delete_share=0.05)


def test_describe_reports_the_dirty_range_a_plan_must_cover(broker: BrokerProcess, changelog: Changelog) -> None:
    with CleanPlanClient(broker.bootstrap) as plans:
        state = plans.describe([TP])[TP]
    assert state.planner == "spark"
    assert state.first_dirty_offset == 0
    assert 0 < state.clean_end_offset < state.high_watermark == len(changelog.entries)
    assert state.size_bytes > 20_000 * 40 and state.dirty_bytes > 0
    assert state.due  # the broker's own cleaner leaves a topic planned by a job alone


def test_a_plan_sent_in_chunks_compacts_the_range_it_covers(broker: BrokerProcess, changelog: Changelog) -> None:
    with CleanPlanClient(broker.bootstrap) as plans:
        state = plans.describe([TP])[TP]
        outcome = plans.apply(state, plan_for(changelog, state), chunk_entries=64)
    assert outcome.records_read >= state.clean_end_offset
    assert outcome.records_kept < outcome.records_read
    assert outcome.bytes_written < outcome.bytes_read
    assert outcome.state.first_dirty_offset == state.clean_end_offset
    assert outcome.state.size_bytes < state.size_bytes
    assert read_all(broker.bootstrap, TOPIC) == changelog.compacted(state.clean_end_offset)


def test_a_stale_plan_is_refused_with_the_reason(broker: BrokerProcess, changelog: Changelog) -> None:
    with CleanPlanClient(broker.bootstrap) as plans:
        state = plans.describe([TP])[TP]
        stale = LogCleaningState(**{**state.__dict__, "first_dirty_offset": 0})
        with pytest.raises(KafkaError) as refused:
            plans.apply(stale, {}, dirty_end=state.first_dirty_offset)
    assert refused.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert f"clean up to {state.first_dirty_offset}" in str(refused.value)


def test_a_plan_for_an_older_leader_epoch_is_fenced(broker: BrokerProcess, changelog: Changelog) -> None:
    with CleanPlanClient(broker.bootstrap) as plans:
        state = plans.describe([TP])[TP]
        with pytest.raises(KafkaError) as refused:
            plans.apply(LogCleaningState(**{**state.__dict__, "leader_epoch": state.leader_epoch + 1}), {})
    assert refused.value.code == ErrorCode.UNKNOWN_LEADER_EPOCH


def test_a_topic_that_is_not_compacted_takes_no_plan(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("plain", num_partitions=1, replication_factor=1)])["plain"].result(30)
    with CleanPlanClient(broker.bootstrap) as plans:
        state = plans.describe([TopicPartition("plain", 0)])[TopicPartition("plain", 0)]
        with pytest.raises(KafkaError) as refused:
            plans.apply(state, {}, dirty_end=0)
    assert refused.value.code == ErrorCode.INVALID_CONFIG
    assert "cleanup.policy=delete" in str(refused.value)

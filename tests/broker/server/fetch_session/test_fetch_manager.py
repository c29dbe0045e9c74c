"""FetchManager: full, incremental and sessionless requests, session errors, and answers with only the news."""

from __future__ import annotations

import random
import uuid

import pytest

from broker_core.server.fetch_session.cache import FetchSessionCache
from broker_core.server.fetch_session.fetch_manager import (
    FULL,
    INCREMENTAL,
    SESSION_ERROR,
    SESSIONLESS,
    FetchManager,
)
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.fetch import FetchRequest as Q
from spate.protocol.messages.fetch import FetchResponse as R

V11, V13 = 11, 13


def manager(slots: int = 10) -> FetchManager:
    return FetchManager(FetchSessionCache(max_entries=slots, eviction_ms=1000, rng=random.Random(1)), lambda: 0)


def request(session_id: int, epoch: int, parts: dict[int, int], *, topic: str = "t", forgotten: tuple = (),
            topic_id=None) -> Q:
    """``parts``: partition -> fetch offset."""
    fetch_topic = Q.FetchTopic(topic=topic, topic_id=topic_id, partitions=[
        Q.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20) for p, o in parts.items()])
    return Q(max_wait_ms=0, min_bytes=1, session_id=session_id, session_epoch=epoch,
             topics=[fetch_topic] if parts else [],
             forgotten_topics_data=[Q.ForgottenTopic(topic=topic, topic_id=topic_id, partitions=list(forgotten))]
             if forgotten else [])


def answer(topics: list, *, hw: dict[int, int], records: dict[int, bytes] = {}, errors: dict[int, int] = {},
           topic_id=None) -> R:
    """A response for ``topics`` (as read), with the given high watermarks, records and errors."""
    out = []
    for topic in topics:
        parts = [R.PartitionData(partition_index=p.partition, error_code=errors.get(p.partition, 0),
                                 high_watermark=hw[p.partition], last_stable_offset=hw[p.partition],
                                 log_start_offset=0, aborted_transactions=None,
                                 records=records.get(p.partition, b""))
                 for p in topic.partitions]
        out.append(R.FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id, partitions=parts))
    return R(throttle_time_ms=0, error_code=0, session_id=0, responses=out)


def answered(response: R) -> dict[int, int]:
    return {p.partition_index: p.high_watermark for t in response.responses for p in t.partitions}


def open_session(fm: FetchManager, parts: dict[int, int], hw: dict[int, int]) -> int:
    ctx = fm.new_context(request(0, 0, parts), V11, follower=False)
    assert ctx.kind == FULL
    return ctx.update_and_generate_response(answer(ctx.topics_to_read(), hw=hw)).session_id


def incremental(fm: FetchManager, session_id: int, epoch: int, parts: dict[int, int], **answer_kwargs):
    ctx = fm.new_context(request(session_id, epoch, parts, forgotten=answer_kwargs.pop("forgotten", ())), V11,
                         follower=False)
    return ctx, ctx.update_and_generate_response(answer(ctx.topics_to_read(), **answer_kwargs))


def test_a_full_request_at_epoch_zero_opens_a_session_with_all_partitions() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0, 1: 0, 2: 0}, hw={0: 5, 1: 5, 2: 5})
    assert session_id > 0
    session = fm.cache.get(session_id)
    assert session.epoch == 1 and session.size == 3


def test_a_legacy_request_is_answered_without_a_session() -> None:
    fm = manager()
    ctx = fm.new_context(request(0, -1, {0: 0}), V11, follower=False)
    assert ctx.kind == SESSIONLESS
    assert ctx.update_and_generate_response(answer(ctx.topics_to_read(), hw={0: 1})).session_id == 0
    assert len(fm.cache) == 0


def test_no_room_in_the_cache_answers_session_id_zero() -> None:
    fm = manager(slots=0)
    assert open_session(fm, {0: 0}, hw={0: 1}) == 0


def test_an_incremental_request_reads_every_session_partition_and_answers_only_changes() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0, 1: 0, 2: 0}, hw={0: 5, 1: 5, 2: 5})
    ctx, response = incremental(fm, session_id, 1, {}, hw={0: 5, 1: 7, 2: 5}, records={2: b"x" * 10})
    assert ctx.kind == INCREMENTAL
    assert sorted(p.partition for t in ctx.topics_to_read() for p in t.partitions) == [0, 1, 2]
    assert response.session_id == session_id
    assert answered(response) == {1: 7, 2: 5}  # 1: new high watermark; 2: records
    _, nothing_new = incremental(fm, session_id, 2, {}, hw={0: 5, 1: 7, 2: 5})
    assert nothing_new.responses == [] and nothing_new.session_id == session_id


def test_an_incremental_request_updates_fetch_offsets_and_adds_partitions() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0}, hw={0: 5})
    ctx, _ = incremental(fm, session_id, 1, {0: 5, 1: 0}, hw={0: 5, 1: 0})
    offsets = {p.partition: p.fetch_offset for t in ctx.topics_to_read() for p in t.partitions}
    assert offsets == {0: 5, 1: 0}
    assert fm.cache.get(session_id).size == 2


def test_forgotten_partitions_leave_the_session_and_an_emptied_session_closes() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0, 1: 0}, hw={0: 5, 1: 5})
    ctx, _ = incremental(fm, session_id, 1, {}, hw={1: 5}, forgotten=(0,))
    assert [p.partition for t in ctx.topics_to_read() for p in t.partitions] == [1]
    ctx = fm.new_context(request(session_id, 2, {}, forgotten=(1,)), V11, follower=False)
    assert ctx.kind == SESSIONLESS and fm.cache.get(session_id) is None


def test_an_error_is_always_answered_and_the_partition_is_sent_again_once_it_clears() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0, 1: 0}, hw={0: 5, 1: 5})
    _, response = incremental(fm, session_id, 1, {}, hw={0: 5, 1: -1}, errors={1: ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert answered(response) == {1: -1}
    _, response = incremental(fm, session_id, 2, {}, hw={0: 5, 1: -1}, errors={1: ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert answered(response) == {1: -1}
    _, response = incremental(fm, session_id, 3, {}, hw={0: 5, 1: 5})
    assert answered(response) == {1: 5}


def test_partitions_that_answered_are_read_last_next_time() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0, 1: 0, 2: 0}, hw={0: 5, 1: 5, 2: 5})
    incremental(fm, session_id, 1, {}, hw={0: 5, 1: 5, 2: 5}, records={0: b"data"})
    ctx, _ = incremental(fm, session_id, 2, {}, hw={0: 5, 1: 5, 2: 5})
    assert [p.partition for t in ctx.topics_to_read() for p in t.partitions] == [1, 2, 0]


@pytest.mark.parametrize(("session_id", "epoch", "error"), [
    (12345, 1, ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    (None, 5, ErrorCode.INVALID_FETCH_SESSION_EPOCH),
])
def test_session_errors_answer_a_top_level_error_without_partitions(session_id, epoch, error) -> None:
    fm = manager()
    opened = open_session(fm, {0: 0}, hw={0: 5})
    ctx = fm.new_context(request(session_id or opened, epoch, {}), V11, follower=False)
    assert ctx.kind == SESSION_ERROR
    response = ctx.update_and_generate_response(None)
    assert (response.error_code, response.session_id, response.responses) == (error, 0, [])
    assert fm.requests[SESSION_ERROR] == 1


def test_a_session_opened_with_topic_names_refuses_a_request_with_topic_ids() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0}, hw={0: 5})
    ctx = fm.new_context(request(session_id, 1, {}, topic_id=uuid.uuid4()), V13, follower=False)
    assert ctx.update_and_generate_response(None).error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def test_a_session_by_topic_id_keys_partitions_by_id() -> None:
    fm = manager()
    topic_id = uuid.uuid4()
    ctx = fm.new_context(request(0, 0, {0: 0}, topic="", topic_id=topic_id), V13, follower=False)
    session_id = ctx.update_and_generate_response(answer(ctx.topics_to_read(), hw={0: 1})).session_id
    ctx = fm.new_context(request(session_id, 1, {}, topic="", forgotten=(0,), topic_id=topic_id), V13,
                         follower=False)
    assert fm.cache.get(session_id) is None and ctx.kind == SESSIONLESS


def test_a_full_request_naming_a_session_closes_it() -> None:
    fm = manager()
    first = open_session(fm, {0: 0}, hw={0: 5})
    ctx = fm.new_context(request(first, -1, {0: 0}), V11, follower=False)
    assert ctx.kind == SESSIONLESS and fm.cache.get(first) is None


def test_a_duplicate_request_in_flight_makes_the_older_answer_an_epoch_error() -> None:
    fm = manager()
    session_id = open_session(fm, {0: 0}, hw={0: 5})
    first = fm.new_context(request(session_id, 1, {}), V11, follower=False)
    second = fm.new_context(request(session_id, 2, {}), V11, follower=False)
    late = first.update_and_generate_response(answer(first.topics_to_read(), hw={0: 6}))
    assert late.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert answered(second.update_and_generate_response(answer(second.topics_to_read(), hw={0: 6}))) == {0: 6}


def test_follower_sessions_are_privileged() -> None:
    fm = manager()
    ctx = fm.new_context(request(0, 0, {0: 0}), V11, follower=True)
    session_id = ctx.update_and_generate_response(answer(ctx.topics_to_read(), hw={0: 1})).session_id
    assert fm.cache.get(session_id).privileged

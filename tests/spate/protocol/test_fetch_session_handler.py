"""A fetcher's session with one broker: a full fetch, then only what changed; a failure starts over."""

from __future__ import annotations

from spate.protocol import ErrorCode
from spate.protocol.fetch_session import FetchMetadata
from spate.protocol.fetch_session_handler import FetchSessionHandler

NONE = ErrorCode.NONE


def opened(positions: dict, session_id: int = 42) -> FetchSessionHandler:
    handler: FetchSessionHandler = FetchSessionHandler()
    first = handler.build(positions)
    assert first.metadata == FetchMetadata(0, 0) and first.to_send == positions and first.to_forget == []
    assert handler.handle_response(NONE, session_id, positions)
    return handler


def test_after_the_full_fetch_opens_a_session_the_next_sends_only_changed_and_new_partitions() -> None:
    handler = opened({"a": 1, "b": 1, "c": 1})
    second = handler.build({"a": 1, "b": 2, "c": 1, "d": 0})
    assert second.metadata == FetchMetadata(42, 1)
    assert second.to_send == {"b": 2, "d": 0} and second.to_forget == []


def test_partitions_no_longer_wanted_are_forgotten() -> None:
    handler = opened({"a": 1, "b": 1})
    request = handler.build({"b": 1})
    assert request.to_send == {} and request.to_forget == ["a"]


def test_epochs_count_up_with_each_answer() -> None:
    handler = opened({"a": 1})
    for epoch in (1, 2, 3):
        assert handler.build({"a": 1}).metadata == FetchMetadata(42, epoch)
        assert handler.handle_response(NONE, 42, [])


def test_no_session_from_the_leader_keeps_sending_full_fetches() -> None:
    handler = opened({"a": 1}, session_id=0)
    assert handler.build({"a": 1}).metadata == FetchMetadata(0, 0)


def test_an_unknown_session_opens_a_new_one_and_other_errors_close_the_old_one() -> None:
    handler = opened({"a": 1})
    handler.build({"a": 1})
    assert not handler.handle_response(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])
    assert handler.build({"a": 1}).metadata == FetchMetadata(0, 0)
    handler = opened({"a": 1})
    handler.build({"a": 1})
    assert not handler.handle_response(ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])
    request = handler.build({"a": 1})
    assert request.metadata == FetchMetadata(42, 0) and request.to_send == {"a": 1}


def test_a_failed_request_or_an_answer_outside_the_session_closes_it() -> None:
    handler = opened({"a": 1})
    handler.build({"a": 1})
    handler.handle_error()
    assert handler.build({"a": 1}).metadata == FetchMetadata(42, 0)
    handler = opened({"a": 1})
    handler.build({"a": 1})
    assert not handler.handle_response(NONE, 42, ["zzz"])
    assert handler.build({"a": 1}).metadata == FetchMetadata(42, 0)

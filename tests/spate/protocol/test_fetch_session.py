"""A Fetch request's session id and epoch (KIP-227), as values."""

from __future__ import annotations

from spate.protocol.fetch_session import FINAL_EPOCH, INITIAL, LEGACY, FetchMetadata, next_epoch


def test_epochs_count_up_from_one_and_wrap_back_to_one() -> None:
    assert next_epoch(0) == 1 and next_epoch(41) == 42
    assert next_epoch(0x7FFFFFFF) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_full_and_incremental_fetches() -> None:
    assert INITIAL.is_full and LEGACY.is_full
    opened = FetchMetadata.new_incremental(7)
    assert (opened.session_id, opened.epoch, opened.is_full) == (7, 1, False)
    assert opened.next_incremental() == FetchMetadata(7, 2)
    assert opened.next_close_existing() == FetchMetadata(7, 0) and opened.next_close_existing().is_full

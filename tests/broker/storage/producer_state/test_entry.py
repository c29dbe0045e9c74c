"""A producer's entry as appends change it (producer_state/entry.py)."""

from __future__ import annotations


def test_epoch_bump_forgets_the_previous_epochs_batches(h):
    h.append(epoch=0, seq=0, count=1)
    h.append(epoch=0, seq=1, count=1)
    h.append(epoch=1, seq=0, count=1)
    entry = h.state.last_entry(1)
    assert [b.first_seq for b in entry.batches] == [0]
    assert entry.producer_epoch == 1


def test_only_the_last_five_batches_are_retained_oldest_first(h):
    for i in range(8):
        h.append(seq=i)
    assert [b.first_seq for b in h.state.last_entry(1).batches] == [3, 4, 5, 6, 7]

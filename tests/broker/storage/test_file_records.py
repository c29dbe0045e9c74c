"""A segment's .log file (file_records.py): appends by position, batch walks, cuts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker_core.storage import file_records
from broker_core.storage.file_records import FileRecords
from tests.broker.storage.batch_factory import make_batch


def test_appends_go_back_to_back_and_report_their_position(tmp_path: Path):
    records = FileRecords(tmp_path / "0.log")
    first, second = make_batch(base_offset=0, records=2), make_batch(base_offset=2)
    assert records.append(first) == 0
    assert records.append(second) == len(first)
    assert records.size == len(first) + len(second)
    assert [h.base_offset for h in records.iter_headers()] == [0, 2]
    assert records.read_bytes(len(first), len(second)) == second


def test_search_and_read_return_whole_batches(tmp_path: Path):
    records = FileRecords(tmp_path / "0.log")
    for base in (0, 3, 6):
        records.append(make_batch(base_offset=base, records=3))
    assert records.search_for_offset(4, 0).base_offset == 3
    assert records.search_for_offset(9, 0) is None
    found = records.read(0, 4, 10_000, max_offset=6)
    assert (found.first_offset, found.last_offset) == (3, 5)


def test_a_failed_write_is_cut_back_to_the_old_end(tmp_path: Path, monkeypatch):
    records = FileRecords(tmp_path / "0.log")
    records.append(make_batch())
    size = records.size
    real_pwrite = os.pwrite

    def torn(fd, data, position):
        real_pwrite(fd, bytes(data[:10]), position)
        raise OSError(28, "no space left")

    monkeypatch.setattr(file_records.os, "pwrite", torn)
    with pytest.raises(OSError):
        records.append(make_batch(base_offset=1))
    assert records.size == size
    assert os.path.getsize(tmp_path / "0.log") == size


def test_truncate_to_cuts_at_a_batch_boundary(tmp_path: Path):
    records = FileRecords(tmp_path / "0.log")
    first = make_batch()
    records.append(first)
    second = make_batch(base_offset=1)
    records.append(second)
    assert records.truncate_to(len(first)) == len(second)
    assert records.size == len(first)
    assert os.path.getsize(tmp_path / "0.log") == len(first)
    assert records.truncate_to(len(first)) == 0

"""Kafka-format offset checkpoint files: layout, atomic replacement, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.errors import CorruptCheckpointError
from broker_core.storage.files import TopicPartition


def test_the_file_is_a_version_line_a_count_line_and_one_line_per_partition(tmp_path: Path):
    checkpoint = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint")
    checkpoint.write({TopicPartition("orders", 1): 980, TopicPartition("orders", 0): 1200})
    assert checkpoint.path.read_text() == "0\n2\norders 0 1200\norders 1 980\n"


def test_offsets_round_trip_including_topics_with_dots_and_dashes(tmp_path: Path):
    offsets = {
        TopicPartition("a.b-c_d", 3): 7,
        TopicPartition("__consumer_offsets", 49): 0,
        TopicPartition("x-1", 2): 2**62,
    }
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets


def test_a_missing_file_reads_as_empty(tmp_path: Path):
    assert OffsetCheckpointFile(tmp_path / "absent").read() == {}


def test_an_empty_mapping_writes_a_valid_empty_checkpoint(tmp_path: Path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    checkpoint.write({})
    assert checkpoint.path.read_text() == "0\n0\n"
    assert checkpoint.read() == {}


def test_writing_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    checkpoint.write({TopicPartition("t", 0): 1})
    (tmp_path / "cp.tmp").write_text("left over by a crash")
    checkpoint.write({TopicPartition("t", 0): 2})
    assert checkpoint.read() == {TopicPartition("t", 0): 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp"]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "missing the version"),
        ("0\n", "missing the version"),
        ("1\n0\n", "unsupported version"),
        ("zero\n0\n", "not an integer"),
        ("0\n2\nt 0 1\n", "declares 2 entries"),
        ("0\n1\nt 0\n", "expected 3"),
        ("0\n1\nt 0 1 2\n", "expected 3"),
        ("0\n1\nt x 1\n", "partition"),
        ("0\n1\nt 0 -5\n", "negative offset"),
        ("0\n2\nt 0 1\nt 0 2\n", "appears twice"),
        (b"0\n1\n\xff 0 1\n", "codec"),
    ],
)
def test_unparsable_content_raises_an_error_naming_the_file(tmp_path: Path, text, problem):
    path = tmp_path / "log-start-offset-checkpoint"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(CorruptCheckpointError, match=problem) as caught:
        OffsetCheckpointFile(path).read()
    assert str(path) in str(caught.value)
    assert caught.value.path == path


def test_fields_separated_by_runs_of_whitespace_parse_as_kafka_reads_them(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n1\nt  0   5\n")
    assert OffsetCheckpointFile(path).read() == {TopicPartition("t", 0): 5}

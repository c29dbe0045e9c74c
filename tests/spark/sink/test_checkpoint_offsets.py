"""Reading a micro-batch's spate source offsets from Spark's offset log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_ext.checkpoint_offsets import (
    CheckpointOffsetsError,
    local_checkpoint_dir,
    parse_offset_log,
    read_batch_offsets,
)
from spate.client import TopicPartition

METADATA = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1795338313074, "conf": {"a": "1"}})


def offset_log(*sources: str, version: int = 1) -> str:
    return "\n".join([f"v{version}", METADATA, *sources])


def test_spark_written_log_of_one_spate_source_gives_its_offsets() -> None:
    # As Spark 4 writes it for a Python source: JSON with spaces, no trailing newline.
    text = offset_log('{"orders": {"0": 10, "1": 23}}')
    assert parse_offset_log(text) == {TopicPartition("orders", 0): 10, TopicPartition("orders", 1): 23}


def test_lines_of_other_sources_are_skipped() -> None:
    text = offset_log('{"logOffset":3}', "-", "42", '{"clicks":{"0":5}}', "not json {", '{"x": {"y": 1}}', "")
    assert parse_offset_log(text) == {TopicPartition("clicks", 0): 5}


def test_several_spate_sources_are_merged_and_a_partition_read_twice_keeps_the_lower_offset() -> None:
    text = offset_log('{"a":{"0":4}}', '{"b":{"0":9,"1":2}}', '{"a":{"0":7,"1":1}}')
    assert parse_offset_log(text) == {
        TopicPartition("a", 0): 4,
        TopicPartition("a", 1): 1,
        TopicPartition("b", 0): 9,
        TopicPartition("b", 1): 2,
    }


def test_negative_markers_are_not_processed_offsets() -> None:
    assert parse_offset_log(offset_log('{"a":{"0":-1,"1":3}}')) == {TopicPartition("a", 1): 3}


def test_version_2_lines_name_their_source_before_a_colon() -> None:
    text = offset_log('spate_in:{"a": {"0": 6}}', "files:-", 'other:{"logOffset":1}', version=2)
    assert parse_offset_log(text) == {TopicPartition("a", 0): 6}


def test_a_log_without_spate_sources_gives_no_offsets() -> None:
    assert parse_offset_log(offset_log('{"logOffset":3}')) == {}
    assert parse_offset_log(offset_log()) == {}


@pytest.mark.parametrize(
    "text",
    ["", "v1", '{"a":{"0":1}}\n{}\n', "v9\n{}\n{\"a\":{\"0\":1}}", "version1\n{}\n"],
    ids=["empty", "no-metadata", "no-version", "unknown-version", "bad-version-line"],
)
def test_text_that_is_not_an_offset_log_is_refused(text: str) -> None:
    with pytest.raises(CheckpointOffsetsError):
        parse_offset_log(text)


@settings(max_examples=100)
@given(
    st.dictionaries(
        st.tuples(st.sampled_from(["a", "b", "t.x"]), st.integers(0, 8)), st.integers(0, 2**62), max_size=12
    )
)
def test_offsets_written_as_spark_writes_them_read_back_equal(offsets: dict[tuple[str, int], int]) -> None:
    nested: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in offsets.items():
        nested.setdefault(topic, {})[str(partition)] = offset
    parsed = parse_offset_log(offset_log(json.dumps(nested)))
    assert parsed == {TopicPartition(t, p): o for (t, p), o in offsets.items()}


def test_read_batch_offsets_reads_offsets_slash_batch_id(tmp_path: Path) -> None:
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "3").write_text(offset_log('{"a":{"0":30}}'))
    (tmp_path / "offsets" / "4").write_text(offset_log('{"a":{"0":40}}'))
    assert read_batch_offsets(tmp_path, 3) == {TopicPartition("a", 0): 30}


def test_a_missing_offset_log_is_a_clear_error_naming_the_batch_and_the_file(tmp_path: Path) -> None:
    with pytest.raises(CheckpointOffsetsError, match=r"micro-batch 7 has no offset log at .*offsets/7"):
        read_batch_offsets(tmp_path, 7)


def test_local_paths_and_file_uris_name_a_local_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert local_checkpoint_dir("ckpt") == tmp_path / "ckpt"
    assert local_checkpoint_dir("/data/ckpt") == Path("/data/ckpt")
    assert local_checkpoint_dir("file:/data/ckpt") == Path("/data/ckpt")
    assert local_checkpoint_dir("file:///data/ckpt") == Path("/data/ckpt")
    assert local_checkpoint_dir("file://localhost/data/ckpt") == Path("/data/ckpt")


@pytest.mark.parametrize("location", ["hdfs://nn:8020/ckpt", "s3a://bucket/ckpt", "file://otherhost/ckpt", " "])
def test_other_schemes_and_hosts_are_refused(location: str) -> None:
    with pytest.raises(CheckpointOffsetsError):
        local_checkpoint_dir(location)

"""The source offsets of one micro-batch, read from the query's offset log.

Before a micro-batch runs, Spark writes its end offsets to
``<checkpointLocation>/offsets/<batchId>`` (UTF-8 text, no trailing newline
needed)::

    v1
    {"batchWatermarkMs":0,"batchTimestampMs":...,"conf":{...}}    batch metadata
    {"orders": {"0": 23, "1": 40}}                                 source 1's offset JSON
    -                                                              source 2: no offset yet
    {"logOffset":3}                                                source 3 (a file source)

one line per source in query order. With source evolution enabled
(``spark.sql.streaming.queryEvolution.enableSourceEvolution``) the version is
``v2`` and each source line is ``<source name>:<offset JSON>``.

A spate source's offset is ``{"topic": {"partition": next offset}}``. A
line of any other shape belongs to another kind of source and is skipped;
Spark's own Kafka source writes the same shape, so its offsets are taken as
well. Several spate sources are merged; where two name the same partition
(a topic read twice) the lower offset wins, so the group never claims more
than every reader processed.

The file is written (atomically: temporary file, then rename) before the
batch's tasks start, so it exists whenever the sink commits that batch.
Only the local filesystem is read: plain paths and ``file:`` URIs.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from spark_ext.offsets import OffsetJsonError, PartitionOffsets, offsets_from_dict

SUPPORTED_VERSIONS = (1, 2)
VOID_OFFSET = "-"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_VERSION = re.compile(r"^v(\d+)$")


class CheckpointOffsetsError(ValueError):
    """The offset log of a micro-batch is missing, unreadable or not in Spark's format."""


def local_checkpoint_dir(location: str) -> Path:
    """The directory of a checkpoint location given as a local path or a ``file:`` URI.

    Relative paths are made absolute against the current directory, as
    Spark's local filesystem does. Other schemes (``hdfs:``, ``s3a:``, ...)
    raise CheckpointOffsetsError.
    """
    text = location.strip()
    if not text:
        raise CheckpointOffsetsError("the checkpoint location is empty")
    match = _SCHEME.match(text)
    # A one-letter "scheme" is a Windows drive (C:\...), i.e. a local path.
    if match is None or len(match.group(1)) == 1:
        return Path(os.path.abspath(text))
    scheme = match.group(1).lower()
    if scheme != "file":
        raise CheckpointOffsetsError(
            f"checkpoint location {text!r} is on {scheme!r}; only local paths and file: URIs can be read"
        )
    rest = text[match.end():]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise CheckpointOffsetsError(f"checkpoint location {text!r} names host {authority!r}; it must be local")
        rest = slash + path
    if not rest.startswith("/"):
        raise CheckpointOffsetsError(f"checkpoint location {text!r} is not an absolute file: URI")
    return Path(rest)


def offset_log_file(checkpoint_dir: Path, batch_id: int) -> Path:
    if batch_id < 0:
        raise ValueError(f"batch ids are not negative, not {batch_id}")
    return checkpoint_dir / "offsets" / str(batch_id)


def parse_offset_log(text: str, *, what: str = "offset log") -> PartitionOffsets:
    """The merged spate source offsets of one offset-log file's text.

    Raises CheckpointOffsetsError when the text is not an offset log at all
    (no version line, an unsupported version, no metadata line).
    """
    lines = text.splitlines()
    if len(lines) < 2:
        raise CheckpointOffsetsError(f"{what} is incomplete: it needs a version line and a metadata line")
    version_match = _VERSION.match(lines[0].strip())
    if version_match is None:
        raise CheckpointOffsetsError(f"{what} does not start with a version line like 'v1': {lines[0][:40]!r}")
    version = int(version_match.group(1))
    if version not in SUPPORTED_VERSIONS:
        raise CheckpointOffsetsError(
            f"{what} has version v{version}; this sink reads v{' and v'.join(map(str, SUPPORTED_VERSIONS))}"
        )
    merged: PartitionOffsets = {}
    for line in lines[2:]:
        offset_text = line.strip()
        if version >= 2:
            _, colon, offset_text = offset_text.partition(":")
            if not colon:
                continue
        for tp, offset in _spate_offsets(offset_text.strip()).items():
            merged[tp] = min(offset, merged.get(tp, offset))
    return merged


def read_batch_offsets(checkpoint_dir: Path, batch_id: int) -> PartitionOffsets:
    """The spate source offsets micro-batch ``batch_id`` read up to; raises CheckpointOffsetsError."""
    path = offset_log_file(checkpoint_dir, batch_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckpointOffsetsError(
            f"micro-batch {batch_id} has no offset log at {path}: is {checkpoint_dir} the query's checkpointLocation?"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointOffsetsError(f"cannot read the offset log {path}: {exc}") from exc
    return parse_offset_log(text, what=f"offset log {path}")


def _spate_offsets(text: str) -> PartitionOffsets:
    """The offsets of a source line in the spate shape; empty for anything else."""
    if not text or text == VOID_OFFSET:
        return {}
    try:
        offsets = offsets_from_dict(json.loads(text))
    except (json.JSONDecodeError, OffsetJsonError):
        return {}
    # Real positions only: negative numbers are markers (earliest/latest), never a processed offset.
    return {tp: offset for tp, offset in offsets.items() if offset >= 0}

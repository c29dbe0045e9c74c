"""The embedded metadata store's file: JSON layout, strict decoding, atomic writes.

Layout (UTF-8 JSON object)::

    {
      "format": 1,
      "cluster_id": "<22-char URL-safe base64>",
      "next_producer_id": <int >= 0>,
      "topics": {
        "<name>": {
          "topic_id": "<uuid>",
          "configs": {"<key>": "<value>", ...},
          "partitions": {
            "<id>": {"leader": int, "leader_epoch": int, "isr": [int], "replicas": [int],
                     "controller_epoch": int, "version": int}
          }
        }
      }
    }

Broker registrations are not in the file: they live only as long as the
process that registered them, like ZooKeeper's ephemeral nodes.

Crash behaviour: the file is replaced with storage's durable-write helper
(:func:`broker_core.storage.fs.write_atomically`: ``<name>.tmp``, fsync,
rename, fsync of the directory), so after a crash the file holds either the
old or the new state, never a mix. A leftover ``.tmp`` (``temp_path``) is an
unfinished write and is discarded on open. Anything that does not decode
exactly as above is reported as corrupt rather than guessed at.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from broker_core.cluster.errors import InvalidTopicNameError, MetadataStoreFileError
from broker_core.cluster.metadata_store import PartitionState, TopicDescription
from broker_core.cluster.topic_names import validate_topic_name
from broker_core.storage.files import temp_path as temp_path  # the store discards a leftover one on open
from broker_core.storage.fs import write_atomically

FORMAT_VERSION = 1


@dataclass(frozen=True)
class StoreState:
    """Everything the file holds; replaced wholesale on every write."""

    cluster_id: str
    next_producer_id: int
    topics: Mapping[str, TopicDescription]


class _Corrupt(Exception):
    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}" if where else reason)


def read_state(path: Path) -> StoreState | None:
    """The state in ``path``, or ``None`` if there is no file yet."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MetadataStoreFileError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetadataStoreFileError(path, f"corrupt: not valid JSON ({exc})") from None
    try:
        return decode_state(document)
    except _Corrupt as exc:
        raise MetadataStoreFileError(path, f"corrupt: {exc}") from None


def write_state(path: Path, state: StoreState) -> None:
    """Durably replace the file with ``state`` (temp file, fsync, rename, fsync dir)."""
    data = json.dumps(encode_state(state), indent=2, sort_keys=True).encode("utf-8") + b"\n"
    try:
        write_atomically(path, data)
    except OSError as exc:
        raise MetadataStoreFileError(path, f"cannot write: {exc.strerror or exc}") from None


def encode_state(state: StoreState) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "cluster_id": state.cluster_id,
        "next_producer_id": state.next_producer_id,
        "topics": {name: _encode_topic(topic) for name, topic in state.topics.items()},
    }


def _encode_topic(topic: TopicDescription) -> dict[str, Any]:
    return {
        "topic_id": str(topic.topic_id),
        "configs": dict(topic.configs),
        "partitions": {
            str(partition): {
                "leader": state.leader,
                "leader_epoch": state.leader_epoch,
                "isr": list(state.isr),
                "replicas": list(state.replicas),
                "controller_epoch": state.controller_epoch,
                "version": state.version,
            }
            for partition, state in topic.partitions.items()
        },
    }


def decode_state(document: object) -> StoreState:
    root = _object(document, "")
    version = _int(root, "format", "")
    if version != FORMAT_VERSION:
        raise _Corrupt("format", f"unsupported format {version}; this version reads format {FORMAT_VERSION}")
    cluster_id = _str(root, "cluster_id", "")
    if not cluster_id:
        raise _Corrupt("cluster_id", "empty")
    next_producer_id = _int(root, "next_producer_id", "")
    if next_producer_id < 0:
        raise _Corrupt("next_producer_id", "negative")
    topics_doc = _object(root.get("topics"), "topics")
    topics = {name: _decode_topic(name, value) for name, value in topics_doc.items()}
    return StoreState(cluster_id=cluster_id, next_producer_id=next_producer_id, topics=topics)


def _decode_topic(name: str, document: object) -> TopicDescription:
    where = f"topics.{name}"
    try:
        validate_topic_name(name)
    except InvalidTopicNameError as exc:
        raise _Corrupt(where, str(exc)) from None
    topic = _object(document, where)
    try:
        topic_id = uuid.UUID(_str(topic, "topic_id", where))
    except ValueError:
        raise _Corrupt(f"{where}.topic_id", "not a UUID") from None
    configs_doc = _object(topic.get("configs"), f"{where}.configs")
    configs: dict[str, str] = {}
    for key, value in configs_doc.items():
        if not isinstance(value, str):
            raise _Corrupt(f"{where}.configs.{key}", "not a string")
        configs[key] = value
    partitions_doc = _object(topic.get("partitions"), f"{where}.partitions")
    partitions: dict[int, PartitionState] = {}
    for key, value in partitions_doc.items():
        if not key.isdigit():
            raise _Corrupt(f"{where}.partitions.{key}", "partition id is not a number")
        partitions[int(key)] = _decode_partition(value, f"{where}.partitions.{key}")
    if not partitions or sorted(partitions) != list(range(len(partitions))):
        raise _Corrupt(f"{where}.partitions", "partition ids must run 0..n-1 without gaps")
    return TopicDescription(name=name, topic_id=topic_id, partitions=partitions, configs=configs)


def _decode_partition(document: object, where: str) -> PartitionState:
    state = _object(document, where)
    return PartitionState(
        leader=_int(state, "leader", where),
        leader_epoch=_int(state, "leader_epoch", where),
        isr=_int_list(state, "isr", where),
        replicas=_int_list(state, "replicas", where),
        controller_epoch=_int(state, "controller_epoch", where),
        version=_int(state, "version", where),
    )


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Corrupt(where, "expected an object" if value is not None else "missing")
    return value


def _field(document: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in document:
        raise _Corrupt(_join(where, key), "missing")
    return document[key]


def _int(document: Mapping[str, Any], key: str, where: str) -> int:
    value = _field(document, key, where)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Corrupt(_join(where, key), "expected an integer")
    return value


def _str(document: Mapping[str, Any], key: str, where: str) -> str:
    value = _field(document, key, where)
    if not isinstance(value, str):
        raise _Corrupt(_join(where, key), "expected a string")
    return value


def _int_list(document: Mapping[str, Any], key: str, where: str) -> tuple[int, ...]:
    value = _field(document, key, where)
    if not isinstance(value, list) or any(not isinstance(v, int) or isinstance(v, bool) for v in value):
        raise _Corrupt(_join(where, key), "expected a list of integers")
    return tuple(value)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key

"""The source's options: Spark's Kafka source names and meanings, parsed and checked.

Option names are case-insensitive (Spark hands them over lower-cased). Every
problem raises :class:`SourceOptionError`, whose message starts with the
option at fault, so a user sees which one to fix.

Read side options:

=====================================  =============================================================
``bootstrap.servers``                  ``host:port,...``; ``kafka.bootstrap.servers`` is an alias
``subscribe``                          comma-separated topics
``subscribePattern``                   regular expression matched against whole topic names
``assign``                             JSON ``{"topic":[0,1]}``
``startingOffsets``                    ``earliest`` | ``latest`` | offset JSON (-2 earliest, -1 latest)
``endingOffsets``                      batch only: ``latest`` | offset JSON (-1 latest)
``startingTimestamp``                  ms; overrides the two below
``startingOffsetsByTimestamp``         JSON of per-partition timestamps; overrides ``startingOffsets``
``startingOffsetsByTimestampStrategy`` ``error`` (default) | ``latest``: when no record is that new
``endingTimestamp`` / ``endingOffsetsByTimestamp``  batch only, as the starting ones
``maxOffsetsPerTrigger``               offsets per micro-batch, spread over partitions
``maxBytesPerTrigger``                 key+value(+header) bytes per micro-batch, estimated (see offset_ranges)
``minOffsetsPerTrigger``               wait for this many new offsets ...
``maxTriggerDelay``                    ... but no longer than this (default ``15m``)
``minPartitions``                      split partitions into at least this many input partitions
``maxRecordsPerPartition``             split so no input partition reads more offsets than this
``failOnDataLoss``                     ``true`` (default) | ``false``
``includeHeaders``                     ``false`` (default) | ``true``: add the ``headers`` column
``isolation.level``                    ``read_uncommitted`` (default) | ``read_committed``
``groupId``                            commit each micro-batch's end offsets to this group
``kafkaConsumer.pollTimeoutMs``        how long a task waits for data it was promised
``metricsPort``                        serve the query's Prometheus metrics from the driver on this port
``metricsHost`` / ``metricsQuery``     the driver's address for them (127.0.0.1) / the ``query`` label
=====================================  =============================================================

``kafka.``-prefixed consumer settings that this client has are passed on
(fetch sizes and waits, timeouts, backoffs, ``client.id``); the ones Spark's
Kafka source forbids are refused with the reason, and any other ``kafka.``
setting is refused as unsupported. ``groupIdPrefix`` and ``fetchOffset.*``
are accepted so that Kafka-source jobs run unchanged; they have no effect,
since the source reads without group membership and the client retries
offset lookups itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from spark_ext.archive_options import ArchiveReadOptions, parse_archive_options
from spark_ext.consumer_strategy import Assign, ConsumerStrategy, Subscribe, SubscribePattern
from spark_ext.kafka_options import SECURITY_KEYWORDS, OptionError, OptionRules
from spark_ext.metrics_options import NAMES as METRICS_OPTIONS
from spark_ext.metrics_options import MetricsOptions, parse_metrics_options
from spark_ext.offset_spec import (
    Earliest,
    GlobalTimestamp,
    Latest,
    OffsetSpec,
    SpecificOffsets,
    SpecificTimestamps,
)
from spark_ext.offsets import EARLIEST_OFFSET, LATEST_OFFSET, OffsetJsonError, parse_offsets_json
from spate.client import TopicPartition

# Lower-cased name -> the spelling users know, for messages.
_DISPLAY = {
    name.lower(): name
    for name in (
        "bootstrap.servers",
        "kafka.bootstrap.servers",
        "subscribe",
        "subscribePattern",
        "assign",
        "archive",
        "archivePath",
        "startingOffsets",
        "endingOffsets",
        "startingTimestamp",
        "endingTimestamp",
        "startingOffsetsByTimestamp",
        "endingOffsetsByTimestamp",
        "startingOffsetsByTimestampStrategy",
        "maxOffsetsPerTrigger",
        "minOffsetsPerTrigger",
        "maxTriggerDelay",
        "maxBytesPerTrigger",
        "minPartitions",
        "maxRecordsPerPartition",
        "minRecordsPerPartition",
        "failOnDataLoss",
        "includeHeaders",
        "isolation.level",
        "kafka.isolation.level",
        "groupId",
        "kafka.group.id",
        "kafkaConsumer.pollTimeoutMs",
        "groupIdPrefix",
        "fetchOffset.numRetries",
        "fetchOffset.retryIntervalMs",
        *METRICS_OPTIONS,
    )
}

# kafka.<name> -> (Consumer keyword, parser). Admin takes the ones in _ADMIN_KEYWORDS too.
_CONSUMER_SETTINGS: dict[str, tuple[str, str]] = {
    "kafka.fetch.min.bytes": ("fetch_min_bytes", "non_negative"),
    "kafka.fetch.max.wait.ms": ("fetch_max_wait_ms", "non_negative"),
    "kafka.max.partition.fetch.bytes": ("max_partition_fetch_bytes", "positive"),
    "kafka.fetch.max.bytes": ("fetch_max_bytes", "positive"),
    "kafka.check.crcs": ("check_crcs", "bool"),
    "kafka.request.timeout.ms": ("request_timeout_ms", "positive"),
    "kafka.default.api.timeout.ms": ("default_api_timeout_ms", "positive"),
    "kafka.retry.backoff.ms": ("retry_backoff_ms", "non_negative"),
    "kafka.retry.backoff.max.ms": ("retry_backoff_max_ms", "non_negative"),
    "kafka.socket.connection.setup.timeout.ms": ("connect_timeout_ms", "positive"),
    "kafka.metadata.max.age.ms": ("metadata_max_age_ms", "positive"),
    "kafka.client.id": ("client_id", "text"),
}
_ADMIN_KEYWORDS = frozenset(
    {"request_timeout_ms", "default_api_timeout_ms", "retry_backoff_ms", "retry_backoff_max_ms",
     "connect_timeout_ms", "client_id"}
)

# Consumer settings Spark's Kafka source refuses, with the reason given to the user.
_FORBIDDEN_KAFKA = {
    "kafka.auto.offset.reset": "set where to start with startingOffsets instead",
    "kafka.enable.auto.commit": "the source commits nothing itself; set groupId to commit processed offsets",
    "kafka.key.deserializer": "keys are always binary; deserialize them with DataFrame operations",
    "kafka.value.deserializer": "values are always binary; deserialize them with DataFrame operations",
    "kafka.interceptor.classes": "consumer interceptors are not supported",
}

_TIME_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30,
               "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}

DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60_000
DEFAULT_POLL_TIMEOUT_MS = 120_000
# About what a task's fixed cost (scheduling, the Python worker's round trip) would read of small records.
DEFAULT_MIN_RECORDS_PER_PARTITION = 16_384


class SourceOptionError(OptionError):
    """An option the source cannot accept; ``option`` is its name as users spell it."""

    side = "spate source"


_RULES = OptionRules(SourceOptionError, "consumer", _DISPLAY, _CONSUMER_SETTINGS, _FORBIDDEN_KAFKA)


@dataclass(frozen=True)
class SourceOptions:
    """Everything a read needs, checked. Picklable: executors receive it."""

    bootstrap_servers: str
    strategy: ConsumerStrategy
    starting: OffsetSpec
    ending: OffsetSpec | None
    timestamp_not_found: str = "error"
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    max_bytes_per_trigger: int | None = None
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    # Ranges shorter than this many offsets share a task (1: one task per range, as Spark's Kafka source plans).
    min_records_per_partition: int = DEFAULT_MIN_RECORDS_PER_PARTITION
    fail_on_data_loss: bool = True
    include_headers: bool = False
    isolation_level: str = "read_uncommitted"
    group_id: str | None = None
    poll_timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS
    consumer_settings: dict[str, Any] = field(default_factory=dict)
    # metricsPort, metricsHost, metricsQuery: the driver's Prometheus endpoint; None when off.
    metrics: MetricsOptions | None = None
    # archive, archivePath: read offsets below the log start from the topic's Delta archive; None when off.
    archive: ArchiveReadOptions | None = None

    def admin_settings(self) -> dict[str, Any]:
        """The consumer settings an Admin client takes too (timeouts, backoffs, client id, security)."""
        return {k: v for k, v in self.consumer_settings.items() if k in _ADMIN_KEYWORDS or k in SECURITY_KEYWORDS}


def parse_source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Check every option of a batch (``streaming=False``) or streaming read."""
    opts = {str(k).lower(): "" if v is None else str(v) for k, v in options.items()}
    known = _known_options(opts)
    consumer_settings, used = _RULES.settings(opts)
    _RULES.reject_unknown(opts, known | set(used))

    starting = _starting_spec(opts, streaming)
    ending = _ending_spec(opts, streaming)
    max_offsets = _positive_int(opts, "maxoffsetspertrigger")
    min_offsets = _positive_int(opts, "minoffsetspertrigger")
    if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
        raise SourceOptionError(
            "minOffsetsPerTrigger", f"{min_offsets} is more than maxOffsetsPerTrigger ({max_offsets})"
        )
    return SourceOptions(
        bootstrap_servers=_RULES.bootstrap_servers(opts),
        strategy=_strategy(opts),
        starting=starting,
        ending=ending,
        timestamp_not_found=_choice(opts, "startingoffsetsbytimestampstrategy", ("error", "latest"), "error"),
        max_offsets_per_trigger=max_offsets,
        min_offsets_per_trigger=min_offsets,
        max_trigger_delay_ms=_duration_ms(opts, "maxtriggerdelay", DEFAULT_MAX_TRIGGER_DELAY_MS),
        max_bytes_per_trigger=_byte_size(opts, "maxbytespertrigger"),
        min_partitions=_positive_int(opts, "minpartitions"),
        max_records_per_partition=_positive_int(opts, "maxrecordsperpartition"),
        min_records_per_partition=_positive_int(opts, "minrecordsperpartition") or DEFAULT_MIN_RECORDS_PER_PARTITION,
        fail_on_data_loss=_bool(opts, "failondataloss", True),
        include_headers=_bool(opts, "includeheaders", False),
        isolation_level=_isolation_level(opts),
        group_id=_group_id(opts),
        poll_timeout_ms=_positive_int(opts, "kafkaconsumer.polltimeoutms") or DEFAULT_POLL_TIMEOUT_MS,
        consumer_settings=consumer_settings,
        metrics=parse_metrics_options(opts, SourceOptionError),
        archive=parse_archive_options(opts, SourceOptionError),
    )


# --- names ----------------------------------------------------------------------------------------


def _known_options(opts: Mapping[str, str]) -> set[str]:
    return {name for name in opts if name in _DISPLAY}


# --- single options -------------------------------------------------------------------------------


def _strategy(opts: Mapping[str, str]) -> ConsumerStrategy:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if name in opts]
    if not given:
        raise SourceOptionError("subscribe", "one of subscribe, subscribePattern or assign is required")
    if len(given) > 1:
        names = " and ".join(_RULES.name(n) for n in given)
        raise SourceOptionError(
            _RULES.name(given[1]), f"only one of subscribe, subscribePattern and assign may be set, not {names}"
        )
    name = given[0]
    value = opts[name].strip()
    if name == "subscribe":
        topics = tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))
        if not topics:
            raise SourceOptionError("subscribe", "names no topic")
        return Subscribe(topics)
    if name == "subscribepattern":
        if not value:
            raise SourceOptionError("subscribePattern", "is empty")
        try:
            re.compile(value)
        except re.error as exc:
            raise SourceOptionError("subscribePattern", f"{value!r} is not a valid regular expression: {exc}") from None
        return SubscribePattern(value)
    return Assign(_assigned_partitions(value))


def _assigned_partitions(text: str) -> tuple[TopicPartition, ...]:
    try:
        nested = json.loads(text)
    except json.JSONDecodeError:
        raise SourceOptionError("assign", f'must be JSON like {{"topicA":[0,1]}}, not {text!r}') from None
    if not isinstance(nested, dict) or not nested:
        raise SourceOptionError("assign", f'must be a non-empty JSON object like {{"topicA":[0,1]}}, not {text!r}')
    partitions: list[TopicPartition] = []
    for topic, numbers in nested.items():
        if not topic or not isinstance(numbers, list) or not numbers:
            raise SourceOptionError("assign", f"topic {topic!r} must map to a non-empty list of partitions")
        for number in numbers:
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise SourceOptionError("assign", f"partition {number!r} of topic {topic!r} is not a partition number")
            partitions.append(TopicPartition(topic, number))
    return tuple(sorted(set(partitions)))


def _starting_spec(opts: Mapping[str, str], streaming: bool) -> OffsetSpec:
    # Spark's precedence: one timestamp for all > per-partition timestamps > offsets.
    if "startingtimestamp" in opts:
        return GlobalTimestamp(_timestamp(opts, "startingtimestamp"), "startingTimestamp")
    if "startingoffsetsbytimestamp" in opts:
        return SpecificTimestamps(_timestamps_json(opts, "startingoffsetsbytimestamp"), "startingOffsetsByTimestamp")
    default: OffsetSpec = Latest() if streaming else Earliest()
    spec = _offsets_spec(opts, "startingoffsets", default)
    if not streaming:
        if isinstance(spec, Latest):
            raise SourceOptionError("startingOffsets", "cannot be 'latest' in a batch query (it would read nothing)")
        if isinstance(spec, SpecificOffsets):
            for tp, offset in spec.offsets.items():
                if offset == LATEST_OFFSET:
                    raise SourceOptionError("startingOffsets", f"{tp} cannot start at latest (-1) in a batch query")
    return spec


def _ending_spec(opts: Mapping[str, str], streaming: bool) -> OffsetSpec | None:
    given = [n for n in ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp") if n in opts]
    if streaming:
        if given:
            raise SourceOptionError(_RULES.name(given[0]), "is only valid in batch queries; a stream has no end")
        return None
    if "endingtimestamp" in opts:
        return GlobalTimestamp(_timestamp(opts, "endingtimestamp"), "endingTimestamp")
    if "endingoffsetsbytimestamp" in opts:
        return SpecificTimestamps(_timestamps_json(opts, "endingoffsetsbytimestamp"), "endingOffsetsByTimestamp")
    spec = _offsets_spec(opts, "endingoffsets", Latest())
    if isinstance(spec, Earliest):
        raise SourceOptionError("endingOffsets", "cannot be 'earliest' (it would read nothing)")
    if isinstance(spec, SpecificOffsets):
        for tp, offset in spec.offsets.items():
            if offset == EARLIEST_OFFSET:
                raise SourceOptionError("endingOffsets", f"{tp} cannot end at earliest (-2)")
    return spec


def _offsets_spec(opts: Mapping[str, str], name: str, default: OffsetSpec) -> OffsetSpec:
    if name not in opts:
        return default
    text = opts[name].strip()
    if text.lower() == "earliest":
        return Earliest()
    if text.lower() == "latest":
        return Latest()
    display = _RULES.name(name)
    try:
        offsets = parse_offsets_json(text, what=display)
    except OffsetJsonError as exc:
        raise SourceOptionError(display, f"must be 'earliest', 'latest' or offset JSON: {exc}") from None
    if not offsets:
        raise SourceOptionError(display, "names no partition")
    for tp, offset in offsets.items():
        if offset < EARLIEST_OFFSET:
            raise SourceOptionError(display, f"{tp} has offset {offset}; use -2 for earliest, -1 for latest")
    return SpecificOffsets(offsets, display)


def _timestamps_json(opts: Mapping[str, str], name: str) -> dict[TopicPartition, int]:
    display = _RULES.name(name)
    try:
        timestamps = parse_offsets_json(opts[name].strip(), what=display)
    except OffsetJsonError as exc:
        raise SourceOptionError(display, f"must be JSON of timestamps per partition: {exc}") from None
    if not timestamps:
        raise SourceOptionError(display, "names no partition")
    for tp, timestamp in timestamps.items():
        if timestamp < 0:
            raise SourceOptionError(display, f"{tp} has a negative timestamp ({timestamp})")
    return timestamps


def _timestamp(opts: Mapping[str, str], name: str) -> int:
    return _RULES.parse_int(name, opts[name].strip(), minimum=0)


def _isolation_level(opts: Mapping[str, str]) -> str:
    name, given = _RULES.aliased(opts, "isolation.level", "kafka.isolation.level", same=lambda v: v.strip().lower())
    value = (given or "read_uncommitted").strip().lower()
    if value not in ("read_uncommitted", "read_committed"):
        raise SourceOptionError(name, f"must be read_uncommitted or read_committed, not {value!r}")
    return value


def _group_id(opts: Mapping[str, str]) -> str | None:
    name, value = _RULES.aliased(opts, "groupid", "kafka.group.id")
    if value is None:
        return None
    if not value.strip():
        raise SourceOptionError(name, "must not be empty")
    return value.strip()


def _choice(opts: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    if name not in opts:
        return default
    value = opts[name].strip().lower()
    if value not in choices:
        raise SourceOptionError(_RULES.name(name), f"must be one of {', '.join(choices)}, not {opts[name]!r}")
    return value


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    return default if name not in opts else _RULES.parse_bool(name, opts[name].strip())


def _positive_int(opts: Mapping[str, str], name: str) -> int | None:
    return None if name not in opts else _RULES.parse_int(name, opts[name].strip(), minimum=1)


def _duration_ms(opts: Mapping[str, str], name: str, default: int) -> int:
    if name not in opts:
        return default
    text = opts[name].strip().lower()
    match = re.fullmatch(r"(\d+)\s*([a-z]*)", text)
    if not match or match.group(2) not in _TIME_UNITS_MS | {"": 1}:
        raise SourceOptionError(_RULES.name(name), f"{opts[name]!r} is not a duration like 500ms, 30s, 15m or 1h")
    return int(int(match.group(1)) * _TIME_UNITS_MS.get(match.group(2), 1))


def _byte_size(opts: Mapping[str, str], name: str) -> int | None:
    if name not in opts:
        return None
    text = opts[name].strip().lower()
    match = re.fullmatch(r"(\d+)\s*([a-z]*)", text)
    if not match or match.group(2) not in _BYTE_UNITS or int(match.group(1)) == 0:
        raise SourceOptionError(_RULES.name(name), f"{opts[name]!r} is not a positive size like 1048576, 512k or 10m")
    return int(match.group(1)) * _BYTE_UNITS[match.group(2)]

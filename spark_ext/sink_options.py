"""The sink's options: Spark's Kafka sink names, plus the exactly-once settings.

Option names are case-insensitive (Spark hands them over lower-cased). Every
problem raises :class:`SinkOptionError`, whose message starts with the option
at fault.

==================================  ==================================================================
``bootstrap.servers``               ``host:port,...``; ``kafka.bootstrap.servers`` is an alias
``topic``                           topic of every row; overrides a ``topic`` column
``deliveryGuarantee``               ``exactly_once`` (streaming default) | ``at_least_once`` (batch
                                    default; for batch writes ``exactly_once`` makes the whole job
                                    one atomic commit)
``transactionalIdPrefix``           stable, unique sink id: transactional ids are ``<prefix>-<task>``;
                                    default: derived from ``checkpointLocation``
``transaction.timeout.ms``          alias ``kafka.transaction.timeout.ms`` (default 60000): must
                                    exceed the longest micro-batch plus the time to restart a query
``sinkBookkeepingTopic``            topic whose partition 0 keys the per-task batch records
                                    (default ``_spate_sink_batches``, created on first use)
``commitTimeoutMs``                 how long the driver keeps trying to end the transactions
``commitParallelism``               how many of a batch's transactions the driver ends at a time
                                    (default 4; 1: one after another)
``metricsPort``                     serve the query's Prometheus metrics from the driver on this port
                                    (``metricsHost``, ``metricsQuery`` as for the source)
``sourceGroupId``                   consumer group of the query's spate source: each micro-batch's
                                    source offsets (read from the checkpoint's offset log) are
                                    committed to it inside the batch's transactions (exactly_once
                                    streaming only; needs a local ``checkpointLocation``)
==================================  ==================================================================

``kafka.``-prefixed producer settings that Spate's producer has are passed on
(compression, batching, timeouts, backoffs, ``client.id``); settings the sink
owns are refused with the reason, any other ``kafka.`` setting as unsupported.
"""

from __future__ import annotations

import enum
import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from spark_ext.checkpoint_offsets import CheckpointOffsetsError, local_checkpoint_dir
from spark_ext.kafka_options import SECURITY_KEYWORDS, OptionError, OptionRules
from spark_ext.metrics_options import NAMES as METRICS_OPTIONS
from spark_ext.metrics_options import MetricsOptions, parse_metrics_options
from spark_ext.sink_parallel_commit import DEFAULT_COMMIT_PARALLELISM

DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000
DEFAULT_COMMIT_TIMEOUT_MS = 120_000
DEFAULT_BOOKKEEPING_TOPIC = "_spate_sink_batches"
# Transactional ids of a query without transactionalIdPrefix: this, then a hash of its checkpoint.
DERIVED_PREFIX = "spate-sink-"


class DeliveryGuarantee(enum.Enum):
    EXACTLY_ONCE = "exactly_once"
    AT_LEAST_ONCE = "at_least_once"


_DISPLAY = {
    name.lower(): name
    for name in (
        "bootstrap.servers",
        "kafka.bootstrap.servers",
        "topic",
        "deliveryGuarantee",
        "transactionalIdPrefix",
        "transaction.timeout.ms",
        "kafka.transaction.timeout.ms",
        "sinkBookkeepingTopic",
        "commitTimeoutMs",
        "commitParallelism",
        "sourceGroupId",
        "checkpointLocation",
        "path",
        *METRICS_OPTIONS,
    )
}

# kafka.<name> -> (Producer keyword, kind).
_PRODUCER_SETTINGS: dict[str, tuple[str, str]] = {
    "kafka.acks": ("acks", "text"),
    "kafka.compression.type": ("compression_type", "text"),
    "kafka.batch.size": ("batch_size", "positive"),
    "kafka.linger.ms": ("linger_ms", "non_negative"),
    "kafka.max.in.flight.requests.per.connection": ("max_in_flight_requests_per_connection", "positive"),
    "kafka.request.timeout.ms": ("request_timeout_ms", "positive"),
    "kafka.delivery.timeout.ms": ("delivery_timeout_ms", "positive"),
    "kafka.retries": ("retries", "non_negative"),
    "kafka.max.request.size": ("max_request_size", "positive"),
    "kafka.buffer.memory": ("buffer_memory", "positive"),
    "kafka.max.block.ms": ("max_block_ms", "non_negative"),
    "kafka.retry.backoff.ms": ("retry_backoff_ms", "non_negative"),
    "kafka.retry.backoff.max.ms": ("retry_backoff_max_ms", "non_negative"),
    "kafka.socket.connection.setup.timeout.ms": ("connect_timeout_ms", "positive"),
    "kafka.metadata.max.age.ms": ("metadata_max_age_ms", "positive"),
    "kafka.client.id": ("client_id", "text"),
}
# Settings that exactly-once delivery depends on.
_EXACTLY_ONCE_CONFLICTS = {
    "kafka.acks": "must be 'all' (or -1) for exactly_once delivery",
    "kafka.retries": "must be above 0 for exactly_once delivery",
}

_FORBIDDEN_KAFKA = {
    "kafka.key.serializer": "keys are written as bytes; serialize them with DataFrame operations",
    "kafka.value.serializer": "values are written as bytes; serialize them with DataFrame operations",
    "kafka.transactional.id": "the sink derives transactional ids itself; set transactionalIdPrefix",
    "kafka.enable.idempotence": "the sink's producers are always idempotent",
    "kafka.interceptor.classes": "producer interceptors are not supported",
    "kafka.partitioner.class": "set the partition column to choose partitions",
}


class SinkOptionError(OptionError):
    """An option the sink cannot accept; ``option`` is its name as users spell it."""

    side = "spate sink"


_RULES = OptionRules(SinkOptionError, "producer", _DISPLAY, _PRODUCER_SETTINGS, _FORBIDDEN_KAFKA)


@dataclass(frozen=True)
class SinkOptions:
    """Everything a write needs, checked. Picklable: executors receive it."""

    bootstrap_servers: str
    topic: str | None
    delivery: DeliveryGuarantee
    transactional_id_prefix: str | None
    transaction_timeout_ms: int = DEFAULT_TRANSACTION_TIMEOUT_MS
    bookkeeping_topic: str = DEFAULT_BOOKKEEPING_TOPIC
    commit_timeout_ms: int = DEFAULT_COMMIT_TIMEOUT_MS
    commit_parallelism: int = DEFAULT_COMMIT_PARALLELISM
    producer_settings: dict[str, Any] = field(default_factory=dict)
    # sourceGroupId, and the local checkpoint directory whose offset log it is committed from.
    source_group_id: str | None = None
    checkpoint_dir: str | None = None
    # metricsPort, metricsHost, metricsQuery: the driver's Prometheus endpoint; None when off.
    metrics: MetricsOptions | None = None

    @property
    def exactly_once(self) -> bool:
        return self.delivery is DeliveryGuarantee.EXACTLY_ONCE

    def admin_settings(self) -> dict[str, Any]:
        """The producer settings an Admin client takes too."""
        keep = ("request_timeout_ms", "retry_backoff_ms", "retry_backoff_max_ms", "connect_timeout_ms", "client_id")
        return {k: v for k, v in self.producer_settings.items() if k in keep or k in SECURITY_KEYWORDS}


def parse_sink_options(options: Mapping[str, str], *, streaming: bool) -> SinkOptions:
    """Check every option of a streaming (``streaming=True``) or batch write.

    A streaming exactly-once write needs a stable sink id: ``transactionalIdPrefix``,
    or else one derived from ``checkpointLocation``; without either this raises.
    """
    opts = {str(k).lower(): "" if v is None else str(v) for k, v in options.items()}
    producer_settings, used = _RULES.settings(opts)
    _RULES.reject_unknown(opts, set(_DISPLAY) | set(used))
    if "path" in opts:
        raise SinkOptionError("path", "is not used by the spate sink; name the topic with the topic option")
    delivery = _delivery(opts, streaming)
    if delivery is DeliveryGuarantee.EXACTLY_ONCE:
        for name, problem in _EXACTLY_ONCE_CONFLICTS.items():
            if name in opts and not _allows_exactly_once(name, producer_settings):
                raise SinkOptionError(name, problem)
    bootstrap_servers = _RULES.bootstrap_servers(opts)
    topic = _topic(opts)
    transaction_timeout_ms = _transaction_timeout_ms(opts)
    bookkeeping_topic = _bookkeeping_topic(opts)
    commit_timeout_ms = _int(opts, "committimeoutms", DEFAULT_COMMIT_TIMEOUT_MS, minimum=1)
    commit_parallelism = _int(opts, "commitparallelism", DEFAULT_COMMIT_PARALLELISM, minimum=1)
    prefix = _transactional_id_prefix(opts)
    if streaming and delivery is DeliveryGuarantee.EXACTLY_ONCE and prefix is None:
        checkpoint = opts.get("checkpointlocation", "").strip()
        if not checkpoint:
            raise SinkOptionError(
                "transactionalIdPrefix",
                "exactly_once delivery needs a stable sink id: set transactionalIdPrefix, or pass the checkpoint "
                "with .option('checkpointLocation', ...) on the writer (a session-wide "
                "spark.sql.streaming.checkpointLocation is not visible to the sink), or set "
                "deliveryGuarantee=at_least_once",
            )
        prefix = sink_id_for_checkpoint(checkpoint)
    source_group_id, checkpoint_dir = _source_group(opts, streaming, delivery)
    return SinkOptions(
        bootstrap_servers=bootstrap_servers,
        topic=topic,
        delivery=delivery,
        transactional_id_prefix=prefix,
        transaction_timeout_ms=transaction_timeout_ms,
        bookkeeping_topic=bookkeeping_topic,
        commit_timeout_ms=commit_timeout_ms,
        commit_parallelism=commit_parallelism,
        producer_settings=producer_settings,
        source_group_id=source_group_id,
        checkpoint_dir=checkpoint_dir,
        metrics=parse_metrics_options(opts, SinkOptionError),
    )


def sink_id_for_checkpoint(checkpoint_location: str) -> str:
    """A stable sink id from a checkpoint location: the same query restarted gets the same id.

    Local paths without a scheme are made absolute first, so ``ckpt`` and
    ``./ckpt`` started from the same directory agree; trailing slashes are ignored.
    """
    location = checkpoint_location.strip()
    if "://" not in location and not location.startswith("file:"):
        location = os.path.abspath(location)
    location = location.rstrip("/") or "/"
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:20]
    return DERIVED_PREFIX + digest


# --- helpers --------------------------------------------------------------------------------------


def _allows_exactly_once(name: str, settings: Mapping[str, Any]) -> bool:
    if name == "kafka.acks":
        return str(settings["acks"]).strip().lower() in ("all", "-1")
    if name == "kafka.retries":
        return int(settings["retries"]) > 0
    return True


def _topic(opts: Mapping[str, str]) -> str | None:
    if "topic" not in opts:
        return None
    topic = opts["topic"].strip()
    if not topic:
        raise SinkOptionError("topic", "is empty")
    return topic


def _delivery(opts: Mapping[str, str], streaming: bool) -> DeliveryGuarantee:
    default = DeliveryGuarantee.EXACTLY_ONCE if streaming else DeliveryGuarantee.AT_LEAST_ONCE
    if "deliveryguarantee" not in opts:
        return default
    text = opts["deliveryguarantee"].strip().lower().replace("-", "_")
    for choice in DeliveryGuarantee:
        if text == choice.value:
            return choice
    given = opts["deliveryguarantee"]
    raise SinkOptionError("deliveryGuarantee", f"must be exactly_once or at_least_once, not {given!r}")


def _transactional_id_prefix(opts: Mapping[str, str]) -> str | None:
    if "transactionalidprefix" not in opts:
        return None
    prefix = opts["transactionalidprefix"].strip()
    if not prefix:
        raise SinkOptionError("transactionalIdPrefix", "is empty")
    return prefix


def _transaction_timeout_ms(opts: Mapping[str, str]) -> int:
    name, value = _RULES.aliased(opts, "transaction.timeout.ms", "kafka.transaction.timeout.ms")
    if value is None:
        return DEFAULT_TRANSACTION_TIMEOUT_MS
    return _RULES.parse_int(name, value.strip(), minimum=1)


def _bookkeeping_topic(opts: Mapping[str, str]) -> str:
    topic = opts.get("sinkbookkeepingtopic", DEFAULT_BOOKKEEPING_TOPIC).strip()
    if not topic:
        raise SinkOptionError("sinkBookkeepingTopic", "is empty")
    return topic


def _source_group(
    opts: Mapping[str, str], streaming: bool, delivery: DeliveryGuarantee
) -> tuple[str | None, str | None]:
    """(sourceGroupId, local checkpoint directory), or (None, None) when the option is not set."""
    if "sourcegroupid" not in opts:
        return None, None
    group = opts["sourcegroupid"].strip()
    if not group:
        raise SinkOptionError("sourceGroupId", "is empty")
    if not streaming:
        raise SinkOptionError("sourceGroupId", "only applies to streaming writes (writeStream), whose checkpoint "
                              "records each micro-batch's source offsets")
    if delivery is not DeliveryGuarantee.EXACTLY_ONCE:
        raise SinkOptionError("sourceGroupId", "commits offsets inside the sink's transactions: it needs "
                              "deliveryGuarantee=exactly_once")
    checkpoint = opts.get("checkpointlocation", "").strip()
    if not checkpoint:
        raise SinkOptionError("sourceGroupId", "needs the query's checkpoint, passed with "
                              ".option('checkpointLocation', ...) on the writer, to read each batch's source offsets")
    try:
        directory = local_checkpoint_dir(checkpoint)
    except CheckpointOffsetsError as exc:
        raise SinkOptionError("sourceGroupId", f"reads the offset log from the local filesystem only: {exc}") from None
    return group, str(directory)


def _int(opts: Mapping[str, str], name: str, default: int, *, minimum: int) -> int:
    if name not in opts:
        return default
    return _RULES.parse_int(name, opts[name].strip(), minimum=minimum)

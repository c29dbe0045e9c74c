"""Every broker property Spate knows, with Kafka's names, types and defaults.

Defaults and bounds are Kafka's except where noted: ``listeners`` binds 127.0.0.1,
``log.dir`` is ``/tmp/spate-logs``, and the internal topics' replication
factors default to 1 so the embedded single broker works with no config file
(a cluster should set them to 3, as Kafka's defaults do).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from broker_core.config.connection_overrides import FORMAT as CONNECTION_OVERRIDES_FORMAT
from broker_core.config.connection_overrides import check_connection_overrides
from broker_core.config.definitions import (
    INT_MAX,
    LONG_MAX,
    ConfigValue,
    CustomCheck,
    NonEmptyDistinctList,
    PropertyDef,
    PropertyType,
    Range,
    Validator,
    ValidList,
    ValidString,
    at_least,
)
from broker_core.config.listeners import check_listener_list, check_protocol_map
from broker_core.config.security_properties import SECURITY_DEFINITIONS
from broker_core.config.zookeeper import CONNECT_FORMAT, check_zookeeper_connect
from broker_core.metrics.listener_address import FORMAT as METRICS_LISTENER_FORMAT
from broker_core.metrics.listener_address import PROPERTY as METRICS_LISTENER
from broker_core.metrics.listener_address import check_metrics_listener

BOOLEAN = PropertyType.BOOLEAN
SHORT = PropertyType.SHORT
INT = PropertyType.INT
LONG = PropertyType.LONG
DOUBLE = PropertyType.DOUBLE
STRING = PropertyType.STRING
LIST = PropertyType.LIST

CLEANUP_POLICIES = ("delete", "compact")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
COMPACTION_PLANNERS = ("broker", "spark")
# Java's Double.MAX_VALUE: Kafka's "unthrottled" for log.cleaner.io.max.bytes.per.second.
DOUBLE_MAX = 1.7976931348623157e308
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
# Kafka allows 4; an index must hold at least one 12-byte time index entry.
MIN_INDEX_BYTES = 12
DEFAULT_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

_LISTENERS = CustomCheck(check_listener_list, "a list of NAME://host:port with distinct names")
_PROTOCOL_MAP = CustomCheck(check_protocol_map, "a list of LISTENER_NAME:SECURITY_PROTOCOL")
_ZOOKEEPER_CONNECT = CustomCheck(check_zookeeper_connect, f"empty or {CONNECT_FORMAT}")
_CONNECTION_OVERRIDES = CustomCheck(check_connection_overrides, CONNECTION_OVERRIDES_FORMAT)
_METRICS_LISTENER = CustomCheck(check_metrics_listener, METRICS_LISTENER_FORMAT)


def _p(
    name: str,
    kind: PropertyType,
    default: ConfigValue,
    doc: str,
    validator: Validator | None = None,
    synonyms: tuple[str, ...] = (),
) -> PropertyDef:
    return PropertyDef(name=name, type=kind, default=default, doc=doc, validator=validator, synonyms=synonyms)


_DEFINITIONS = (
    # Identity and endpoints.
    _p("node.id", INT, None, "This broker's id; takes precedence over broker.id.", at_least(0), ("broker.id",)),
    _p("broker.id", INT, 0, "This broker's id (the ZooKeeper-era name of node.id).", at_least(0)),
    _p("broker.rack", STRING, None, "Rack of this broker, for rack-aware replica placement."),
    _p("listeners", LIST, ("PLAINTEXT://127.0.0.1:9092",), "Endpoints to bind, as NAME://host:port.", _LISTENERS),
    _p(
        "advertised.listeners",
        LIST,
        None,
        "Endpoints clients are told to use; defaults to listeners.",
        _LISTENERS,
        ("listeners",),
    ),
    _p(
        "listener.security.protocol.map",
        LIST,
        tuple(DEFAULT_PROTOCOL_MAP.split(",")),
        "Security protocol of each listener name.",
        _PROTOCOL_MAP,
    ),
    _p(
        "inter.broker.listener.name",
        STRING,
        None,
        "Listener brokers use to talk to each other; defaults to the first.",
    ),
    # Network and request handling.
    _p("num.network.threads", INT, 3, "Threads reading requests from and writing responses to sockets.", at_least(1)),
    _p("num.io.threads", INT, 8, "Threads that process requests, including disk I/O.", at_least(1)),
    _p("background.threads", INT, 10, "Threads for background work such as deleting files.", at_least(1)),
    # Client quotas: the rate window (set quotas with AlterClientQuotas).
    _p("quota.window.num", INT, 11, "Samples kept for client quota rates.", at_least(1)),
    _p("quota.window.size.seconds", INT, 1, "Length of each client quota rate sample.", at_least(1)),
    _p(
        "queued.max.requests",
        INT,
        500,
        "Requests queued for the I/O threads before the network stops reading.",
        at_least(1),
    ),
    _p("socket.send.buffer.bytes", INT, 102400, "SO_SNDBUF of server sockets; -1 uses the OS default.", at_least(-1)),
    _p(
        "socket.receive.buffer.bytes",
        INT,
        102400,
        "SO_RCVBUF of server sockets; -1 uses the OS default.",
        at_least(-1),
    ),
    _p("socket.request.max.bytes", INT, 104857600, "Largest request the broker accepts.", at_least(1)),
    _p("socket.listen.backlog.size", INT, 50, "Backlog of pending connections on each listening socket.", at_least(1)),
    _p(
        "connections.max.idle.ms",
        LONG,
        600000,
        "A connection that completes no request for this long is closed; negative never closes one.",
    ),
    _p(
        "max.connections",
        INT,
        INT_MAX,
        "Most connections the broker holds at once; past it, new ones wait in the listen backlog. "
        "The inter-broker listener is exempt when there are others, and a connection on it then closes the least "
        "recently used client connection. Also per listener: listener.name.<listener>.max.connections.",
        at_least(0),
    ),
    _p(
        "max.connections.per.ip",
        INT,
        INT_MAX,
        "Most connections from one address; one more is closed at once.",
        at_least(0),
    ),
    _p(
        "max.connections.per.ip.overrides",
        STRING,
        "",
        "Per-host exceptions to max.connections.per.ip, as host:count,host:count.",
        _CONNECTION_OVERRIDES,
    ),
    # Kafka's default is -1 (unbounded); a bound keeps many large requests from exhausting memory.
    _p(
        "queued.max.request.bytes",
        LONG,
        268435456,
        "Request bytes read but not yet answered, across connections, before the broker stops reading; "
        "-1 is unbounded.",
        at_least(-1),
    ),
    # Logs.
    _p("log.dir", STRING, "/tmp/spate-logs", "Directory of the log data, used when log.dirs is unset."),
    _p("log.dirs", LIST, None, "Directories of the log data; overrides log.dir.", NonEmptyDistinctList(), ("log.dir",)),
    _p("num.partitions", INT, 1, "Partitions of an auto-created topic or one created without a count.", at_least(1)),
    _p(
        "max.partitions",
        INT,
        100000,
        "Most partitions of all topics together (cluster-wide in a cluster); a CreateTopics, CreatePartitions "
        "or auto-creation that would exceed it is refused (POLICY_VIOLATION) before anything is written. The "
        "default is ten brokers' worth of max.broker.partitions at half use.",
        at_least(1),
    ),
    _p(
        "max.broker.partitions",
        INT,
        20000,
        "Most partition replicas one broker may host; creations that would exceed it on any broker are refused "
        "(POLICY_VIOLATION). The default lets 10,000 partitions live on a broker with room to grow; partitions "
        "keep no files open between uses (see log.max.open.files), so the open-file limit does not bound them.",
        at_least(1),
    ),
    _p("default.replication.factor", INT, 1, "Replication factor of topics created without one.", at_least(1)),
    _p("log.segment.bytes", INT, 1073741824, "A segment rolls when it reaches this size.", at_least(14)),
    _p(
        "log.roll.ms",
        LONG,
        None,
        "A segment rolls when its first record is this old.",
        at_least(1),
        ("log.roll.hours",),
    ),
    _p("log.roll.hours", INT, 168, "log.roll.ms in hours, used when log.roll.ms is unset.", at_least(1)),
    _p(
        "log.retention.ms",
        LONG,
        None,
        "Segments older than this are deleted; -1 keeps them forever.",
        None,
        ("log.retention.minutes", "log.retention.hours"),
    ),
    _p("log.retention.minutes", INT, None, "log.retention.ms in minutes, used when log.retention.ms is unset."),
    _p("log.retention.hours", INT, 168, "log.retention.ms in hours, used when the ms and minutes forms are unset."),
    _p("log.retention.bytes", LONG, -1, "Segments are deleted while a partition exceeds this size; -1 for no limit."),
    _p("log.retention.check.interval.ms", LONG, 300000, "How often retention runs.", at_least(1)),
    _p("log.cleanup.policy", LIST, ("delete",), "delete, compact, or both.", ValidList(CLEANUP_POLICIES)),
    _p(
        "log.max.open.files",
        INT,
        4096,
        "Most descriptors all segment files (.log, .index, .timeindex) of the broker hold together; the least "
        "recently used are closed past it and reopen on their next read or append. Lowered to what the "
        "open-file limit (ulimit -n) leaves after 1024 reserved for connections. Kafka keeps every segment "
        "file open instead.",
        at_least(16),
    ),
    _p("log.index.interval.bytes", INT, 4096, "Bytes of log between two offset index entries.", at_least(0)),
    _p(
        "log.index.size.max.bytes",
        INT,
        10485760,
        "Largest offset or time index; a full index rolls the segment.",
        at_least(MIN_INDEX_BYTES),
    ),
    _p("log.flush.interval.messages", LONG, LONG_MAX, "fsync a partition after this many messages.", at_least(1)),
    _p(
        "log.flush.interval.ms",
        LONG,
        None,
        "fsync a partition whose oldest unflushed message is this old.",
        at_least(0),
        ("log.flush.scheduler.interval.ms",),
    ),
    _p(
        "log.flush.scheduler.interval.ms",
        LONG,
        LONG_MAX,
        "How often the flusher checks; the default of log.flush.interval.ms.",
    ),
    _p(
        "log.flush.offset.checkpoint.interval.ms",
        INT,
        60000,
        "How often recovery points are checkpointed.",
        at_least(0),
    ),
    _p(
        "log.flush.start.offset.checkpoint.interval.ms",
        INT,
        60000,
        "How often log start offsets are checkpointed.",
        at_least(0),
    ),
    _p(
        "log.segment.delete.delay.ms",
        LONG,
        60000,
        "Delay between removing a segment from the log and deleting its files.",
        at_least(0),
    ),
    _p("log.preallocate", BOOLEAN, False, "Preallocate segment files on creation."),
    _p(
        "log.message.downconversion.enable",
        BOOLEAN,
        True,
        "Whether Fetch requests before v4 may read topics, converted to the legacy message formats.",
    ),
    _p(
        "log.message.timestamp.type",
        STRING,
        "CreateTime",
        "Timestamp the log keeps: the producer's or the append time.",
        ValidString(TIMESTAMP_TYPES),
    ),
    _p(
        "log.message.timestamp.difference.max.ms",
        LONG,
        LONG_MAX,
        "Largest allowed gap between a CreateTime timestamp and the broker's clock.",
        at_least(0),
    ),
    _p(
        "log.message.timestamp.before.max.ms",
        LONG,
        LONG_MAX,
        "How far in the past a CreateTime timestamp may be.",
        at_least(0),
    ),
    _p(
        "log.message.timestamp.after.max.ms",
        LONG,
        LONG_MAX,
        "How far in the future a CreateTime timestamp may be.",
        at_least(0),
    ),
    _p("log.cleaner.enable", BOOLEAN, True, "Run the log cleaner that compacts cleanup.policy=compact topics."),
    _p("log.cleaner.threads", INT, 1, "Background threads that clean logs.", at_least(0)),
    _p("log.cleaner.backoff.ms", LONG, 15000, "Sleep of a cleaner thread when no log is due.", at_least(0)),
    _p(
        "log.cleaner.dedupe.buffer.size",
        LONG,
        134217728,
        "Memory of the key-to-offset map, over all cleaner threads (24 bytes a key).",
        at_least(0),
    ),
    _p(
        "log.cleaner.io.max.bytes.per.second",
        DOUBLE,
        DOUBLE_MAX,
        "Read plus write rate the cleaner threads keep under, together.",
        at_least(0.0),
    ),
    _p(
        "spate.compaction.planner",
        STRING,
        "broker",
        "Who plans compaction of a topic: the broker's cleaner, or the Spark compaction job.",
        ValidString(COMPACTION_PLANNERS),
    ),
    _p("log.cleaner.delete.retention.ms", LONG, 86400000, "How long tombstones survive compaction.", at_least(0)),
    _p("log.cleaner.min.compaction.lag.ms", LONG, 0, "Messages younger than this are never compacted.", at_least(0)),
    _p(
        "log.cleaner.max.compaction.lag.ms",
        LONG,
        LONG_MAX,
        "Messages older than this are due for compaction.",
        at_least(1),
    ),
    _p(
        "log.cleaner.min.cleanable.ratio",
        DOUBLE,
        0.5,
        "Dirty share of a log that makes it due for compaction.",
        Range(0.0, 1.0),
    ),
    # Kafka 4's default: closing logs is mostly fsyncs, which a second thread makes several times faster.
    _p(
        "num.recovery.threads.per.data.dir",
        INT,
        2,
        "Threads per log dir that load logs at start-up and flush and close them at shutdown.",
        at_least(1),
    ),
    _p("message.max.bytes", INT, 1048588, "Largest record batch the broker accepts.", at_least(0)),
    _p(
        "compression.type",
        STRING,
        "producer",
        "Compression of stored batches; producer keeps the producer's.",
        ValidString(COMPRESSION_TYPES),
    ),
    # Topics and leadership.
    _p("auto.create.topics.enable", BOOLEAN, True, "Create a topic when a client first asks for it."),
    _p("delete.topic.enable", BOOLEAN, True, "Allow topics to be deleted."),
    _p("min.insync.replicas", INT, 1, "In-sync replicas an acks=all write needs.", at_least(1)),
    _p("unclean.leader.election.enable", BOOLEAN, False, "Allow an out-of-sync replica to become leader, losing data."),
    _p("auto.leader.rebalance.enable", BOOLEAN, True, "Move leadership back to preferred replicas."),
    _p("leader.imbalance.check.interval.seconds", LONG, 300, "How often leadership balance is checked.", at_least(1)),
    _p("leader.imbalance.per.broker.percentage", INT, 10,
       "Share of a broker's preferred partitions led elsewhere before leadership is moved back.", at_least(0)),
    # Incremental fetch sessions (KIP-227).
    _p("max.incremental.fetch.session.cache.slots", INT, 1000,
       "Incremental fetch sessions the broker keeps; 0 answers every fetch without a session.", at_least(0)),
    _p("min.incremental.fetch.session.eviction.ms", INT, 120000,
       "How long a fetch session is safe from eviction by sessions with more partitions.", at_least(0)),
    # Replication.
    _p("num.replica.fetchers", INT, 1, "Fetcher threads per source broker.", at_least(1)),
    _p(
        "replica.lag.time.max.ms",
        LONG,
        30000,
        "A follower that has not caught up for this long leaves the ISR.",
        at_least(1),
    ),
    _p("replica.fetch.max.bytes", INT, 1048576, "Bytes a follower asks for per partition.", at_least(0)),
    _p("replica.fetch.response.max.bytes", INT, 10485760, "Bytes a follower asks for per fetch.", at_least(0)),
    _p("replica.fetch.wait.max.ms", INT, 500, "How long a follower's fetch waits for data.", at_least(0)),
    _p("replica.fetch.min.bytes", INT, 1, "Bytes a follower's fetch waits for.", at_least(1)),
    _p("replica.fetch.backoff.ms", INT, 1000, "Pause after a failed follower fetch.", at_least(0)),
    _p("replica.socket.timeout.ms", INT, 30000, "Socket timeout of follower fetches.", at_least(1)),
    _p(
        "replica.high.watermark.checkpoint.interval.ms",
        LONG,
        5000,
        "How often high watermarks are checkpointed.",
        at_least(1),
    ),
    _p("controller.socket.timeout.ms", INT, 30000, "Socket timeout of controller-to-broker requests.", at_least(1)),
    _p("request.timeout.ms", INT, 30000,
       "How long inter-broker requests and transaction-state writes wait (for their answer, or for replication).",
       at_least(1)),
    _p("fetch.max.bytes", INT, 57671680, "Most bytes one Fetch response carries.", at_least(1024)),
    _p("controlled.shutdown.enable", BOOLEAN, True, "Move leadership away before shutting down."),
    _p("controlled.shutdown.max.retries", INT, 3, "Attempts at a controlled shutdown.", at_least(0)),
    _p("controlled.shutdown.retry.backoff.ms", LONG, 5000, "Pause between controlled shutdown attempts.", at_least(0)),
    # Consumer groups.
    _p("offsets.topic.num.partitions", INT, 50, "Partitions of __consumer_offsets (fixed once created).", at_least(1)),
    _p(
        "offsets.topic.replication.factor",
        SHORT,
        1,
        "Replication factor of __consumer_offsets (Kafka's default is 3).",
        at_least(1),
    ),
    _p("offsets.topic.segment.bytes", INT, 104857600, "Segment size of __consumer_offsets.", at_least(1)),
    _p("offsets.retention.minutes", INT, 10080, "Committed offsets of an empty group expire after this.", at_least(1)),
    _p("offsets.retention.check.interval.ms", LONG, 600000, "How often expired offsets are removed.", at_least(1)),
    _p("offsets.commit.timeout.ms", INT, 5000, "How long an offset commit waits for replication.", at_least(1)),
    _p("offsets.load.buffer.size", INT, 5242880, "Read size when loading offsets into the cache.", at_least(1)),
    _p("offset.metadata.max.bytes", INT, 4096, "Largest metadata string stored with a committed offset.", at_least(0)),
    _p(
        "group.initial.rebalance.delay.ms",
        INT,
        3000,
        "How long a new group waits for more members before its first rebalance.",
        at_least(0),
    ),
    _p("group.min.session.timeout.ms", INT, 6000, "Smallest session timeout a member may ask for.", at_least(0)),
    _p("group.max.session.timeout.ms", INT, 1800000, "Largest session timeout a member may ask for.", at_least(0)),
    _p("group.max.size", INT, INT_MAX, "Most members one group may have.", at_least(1)),
    # Consumer groups of the next-generation protocol (KIP-848, group.protocol=consumer).
    _p("group.consumer.heartbeat.interval.ms", INT, 5000, "How often consumer-group members heartbeat.", at_least(1)),
    _p("group.consumer.session.timeout.ms", INT, 45000, "A consumer-group member silent this long is removed.",
       at_least(1)),
    _p("group.consumer.assignors", LIST, ("uniform", "range"),
       "Server-side assignors of consumer groups; the first is the default.", ValidList(("uniform", "range"))),
    _p("group.consumer.max.size", INT, INT_MAX, "Most members one consumer group may have.", at_least(1)),
    _p("group.consumer.migration.policy", STRING, "bidirectional",
       "Which empty groups may change between classic and consumer on a first join.",
       ValidString(("bidirectional", "upgrade", "downgrade", "disabled"))),
    # Transactions and producer ids.
    _p(
        "transaction.state.log.num.partitions",
        INT,
        50,
        "Partitions of __transaction_state (fixed once created).",
        at_least(1),
    ),
    _p(
        "transaction.state.log.replication.factor",
        SHORT,
        1,
        "Replication factor of __transaction_state (Kafka's default is 3).",
        at_least(1),
    ),
    _p(
        "transaction.state.log.min.isr",
        INT,
        1,
        "min.insync.replicas of __transaction_state (Kafka's default is 2).",
        at_least(1),
    ),
    _p("transaction.state.log.segment.bytes", INT, 104857600, "Segment size of __transaction_state.", at_least(1)),
    _p("transaction.max.timeout.ms", INT, 900000, "Largest transaction timeout a producer may ask for.", at_least(1)),
    _p(
        "transactional.id.expiration.ms",
        INT,
        604800000,
        "A transactional id idle this long is forgotten.",
        at_least(1),
    ),
    _p(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        INT,
        10000,
        "How often timed-out transactions are aborted.",
        at_least(1),
    ),
    _p(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        INT,
        3600000,
        "How often expired transactional ids are removed.",
        at_least(1),
    ),
    _p(
        "producer.id.expiration.ms",
        INT,
        86400000,
        "A producer id idle this long is forgotten by partition leaders.",
        at_least(1),
    ),
    _p(
        "producer.id.expiration.check.interval.ms",
        INT,
        600000,
        "How often expired producer ids are removed.",
        at_least(1),
    ),
    # Metadata.
    _p(
        "zookeeper.connect",
        STRING,
        "",
        "ZooKeeper connect string; empty runs the embedded single-node metadata store.",
        _ZOOKEEPER_CONNECT,
    ),
    _p("zookeeper.session.timeout.ms", INT, 18000, "ZooKeeper session timeout.", at_least(1)),
    _p(
        "zookeeper.connection.timeout.ms",
        INT,
        None,
        "How long to wait for a ZooKeeper connection; defaults to the session timeout.",
        at_least(1),
    ),
    _p(
        "zookeeper.max.in.flight.requests",
        INT,
        10,
        "Unacknowledged ZooKeeper requests before the client blocks.",
        at_least(1),
    ),
    # ZooKeeper authentication: Kafka's JVM system properties, taken as broker properties.
    _p(
        "java.security.auth.login.config",
        STRING,
        None,
        "JAAS file whose zookeeper.sasl.clientconfig section (DigestLoginModule) logs the broker in to ZooKeeper.",
    ),
    _p("zookeeper.sasl.client", BOOLEAN, True, "Log in to ZooKeeper with SASL when the JAAS file has the section."),
    _p("zookeeper.sasl.clientconfig", STRING, "Client", "Section of the JAAS file used to log in to ZooKeeper."),
    _p(
        "zookeeper.set.acl",
        BOOLEAN,
        False,
        "Give the znodes the broker creates ACLs: its SASL user ALL, everyone READ except credentials.",
    ),
    _p("metadata.log.dir", STRING, None, "Directory of the embedded metadata store; defaults to the first log dir."),
    # Metrics.
    _p(
        METRICS_LISTENER,
        STRING,
        None,
        "Where GET /metrics (Prometheus text format) is served, as http://host:port; unset turns it off.",
        _METRICS_LISTENER,
    ),
    *SECURITY_DEFINITIONS,
)

BROKER_PROPERTIES: Mapping[str, PropertyDef] = MappingProxyType({d.name: d for d in _DEFINITIONS})
if len(BROKER_PROPERTIES) != len(_DEFINITIONS):
    raise RuntimeError("a broker property is declared twice")

# Properties besides the security ones that may also be set for one listener, as
# ``listener.name.<listener>.<property>`` (the listener name in lower case, as Kafka writes it); unset, the
# listener has no limit of its own (KIP-402).
LISTENER_PROPERTIES: frozenset[str] = frozenset({"max.connections"})

"""``kafka-console-producer.sh``: one record per line of stdin, as ``spate produce`` writes them.

``--property parse.key=true`` splits each line at ``key.separator`` (a tab
unless set) into key and value. Acks come from ``--request-required-acks``
or ``--producer-property acks=...`` (default all, as Kafka's tool), the
compression from ``--compression-codec``; the other producer tuning flags
are accepted and left to Spate's producer defaults.
"""

from __future__ import annotations

import sys
from typing import Sequence

from spate.cli import produce as spate_produce
from spate.cli.common import ACKS_CHOICES, COMPRESSION_CHOICES
from spate.cli.kafka_tools.tool import (
    KafkaToolParser,
    ToolUsageError,
    property_pairs,
    read_properties,
    require,
    run_tool,
    spate_args,
)

PROG = "kafka-console-producer.sh"
DEFAULT_KEY_SEPARATOR = "\t"
# Producer tuning flags of Kafka's tool that change nothing a line-by-line producer could observe.
TUNING_FLAGS = ("--batch-size", "--message-send-max-retries", "--retry-backoff-ms", "--timeout", "--max-block-ms",
                "--max-memory-bytes", "--max-partition-memory-bytes", "--metadata-expiry-ms", "--socket-buffer-size",
                "--request-timeout-ms", "--line-reader", "--reader-config")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Read lines from stdin and write each as a record to a topic.")
    parser.add_argument("--broker-list", metavar="HOST:PORT", help="the older name of --bootstrap-server")
    parser.add_argument("--topic", metavar="TOPIC")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="parse.key=true and key.separator=SEP split each line into key and value")
    parser.add_argument("--producer-property", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--producer.config", dest="producer_config", metavar="FILE")
    parser.add_argument("--request-required-acks", metavar="ACKS")
    parser.add_argument("--compression-codec", nargs="?", const="gzip", metavar="CODEC")
    parser.add_argument("--sync", action="store_true")
    for flag in TUNING_FLAGS:
        parser.add_argument(flag, metavar="VALUE")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_tool_args(_with_broker_list(argv))
    topic = require(args, "topic", "produce")
    reader = property_pairs(args.property, "--property")
    producer = read_properties(args.producer_config) if args.producer_config else {}
    producer.update(property_pairs(args.producer_property, "--producer-property"))
    separator = reader.get("key.separator", DEFAULT_KEY_SEPARATOR) if _true(reader.get("parse.key")) else None
    return spate_produce.run_produce(spate_args(
        args, topic=topic, file=None, key_separator=separator, header=[], partition=None,
        acks=_acks(args.request_required_acks or producer.get("acks", "all")),
        compression=_compression(args.compression_codec or producer.get("compression.type", "none")),
    ))


def _with_broker_list(argv: Sequence[str] | None) -> list[str]:
    """``--broker-list`` is the old spelling of ``--bootstrap-server``."""
    args = list(sys.argv[1:] if argv is None else argv)
    return ["--bootstrap-server" if a == "--broker-list" else
            a.replace("--broker-list=", "--bootstrap-server=", 1) for a in args]


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _acks(value: str) -> str:
    acks = value.strip().lower()
    if acks not in ACKS_CHOICES:
        raise ToolUsageError(f"acks must be one of {', '.join(ACKS_CHOICES)}, not {value!r}")
    return acks


def _compression(value: str) -> str:
    codec = value.strip().lower()
    if codec not in COMPRESSION_CHOICES:
        raise ToolUsageError(f"compression codec must be one of {', '.join(COMPRESSION_CHOICES)}, not {value!r}")
    return codec


def run() -> None:
    sys.exit(run_tool(main))

"""``kafka-console-consumer.sh``: print a topic's records, as ``spate consume`` reads them.

Without ``--group`` (or ``--consumer-property group.id=...``) it reads
every partition, or ``--partition`` from ``--offset``; with one it joins
the group. ``--from-beginning``, ``--max-messages``, ``--timeout-ms`` and
``--isolation-level`` mean what they mean in Kafka's tool;
``--property print.key=true`` prints ``KEY<key.separator>VALUE``. "Processed
a total of N messages" goes to stderr at the end.
"""

from __future__ import annotations

import sys
from typing import Sequence

from spate.cli import consume as spate_consume
from spate.cli.kafka_tools.tool import (
    KafkaToolParser,
    ToolUsageError,
    property_pairs,
    read_properties,
    require,
    run_tool,
    spate_args,
)

PROG = "kafka-console-consumer.sh"
DEFAULT_KEY_SEPARATOR = "\t"
DEFAULT_FORMATTER = "kafka.tools.DefaultMessageFormatter"
# Properties of Kafka's default formatter that Spate's text output has no column for.
UNSUPPORTED_PRINT_PROPERTIES = ("print.timestamp", "print.partition", "print.offset", "print.headers")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Print the records of a topic.")
    parser.add_argument("--topic", metavar="TOPIC")
    parser.add_argument("--group", metavar="GROUP")
    parser.add_argument("--from-beginning", action="store_true")
    parser.add_argument("--partition", type=int, metavar="P")
    parser.add_argument("--offset", metavar="OFFSET", help="earliest, latest or a number; needs --partition")
    parser.add_argument("--max-messages", type=int, metavar="N")
    parser.add_argument("--timeout-ms", type=int, metavar="MS")
    parser.add_argument("--isolation-level", choices=("read_uncommitted", "read_committed"))
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--consumer-property", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--consumer.config", dest="consumer_config", metavar="FILE")
    parser.add_argument("--formatter", default=DEFAULT_FORMATTER, metavar="CLASS")
    parser.add_argument("--skip-message-on-error", action="store_true")
    parser.add_argument("--enable-systest-events", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    topic = require(args, "topic", "consume")
    if args.formatter != DEFAULT_FORMATTER:
        raise ToolUsageError(f"--formatter {args.formatter} is not supported; only the default formatter is")
    printing = property_pairs(args.property, "--property")
    for name in UNSUPPORTED_PRINT_PROPERTIES:
        if printing.get(name, "false").strip().lower() == "true":
            raise ToolUsageError(f"--property {name}=true is not supported")
    consumer = read_properties(args.consumer_config) if args.consumer_config else {}
    consumer.update(property_pairs(args.consumer_property, "--consumer-property"))
    group = args.group or consumer.get("group.id")
    from_beginning = args.from_beginning or consumer.get("auto.offset.reset", "").lower() == "earliest"
    offset = None if args.offset is None else _offset(args.offset)
    if offset is not None and args.partition is None:
        raise ToolUsageError("The partition is required when offset is specified.")
    return spate_consume.run_consume(spate_args(
        args, topic=topic, from_beginning=from_beginning and offset is None, group=group,
        partition=args.partition, offset=offset, max_messages=args.max_messages, timeout_ms=args.timeout_ms,
        isolation_level=args.isolation_level or consumer.get("isolation.level", "read_uncommitted"),
        format="text", print_key=printing.get("print.key", "false").strip().lower() == "true",
        key_separator=printing.get("key.separator", DEFAULT_KEY_SEPARATOR),
    ))


def _offset(text: str) -> int | str:
    lowered = text.strip().lower()
    if lowered in ("earliest", "latest"):
        return lowered
    try:
        value = int(lowered)
    except ValueError:
        raise ToolUsageError(f"--offset must be earliest, latest or a non-negative number, not {text!r}") from None
    if value < 0:
        raise ToolUsageError(f"--offset must be earliest, latest or a non-negative number, not {text!r}")
    return value


def run() -> None:
    sys.exit(run_tool(main))

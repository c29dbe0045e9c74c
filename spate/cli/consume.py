"""``spate consume TOPIC``: print records as text lines or JSON lines.

Without a group the consumer reads assigned partitions (all of them, or
``--partition``), starting at the log end unless ``--from-beginning`` or
``--offset`` says otherwise. With ``--group G`` it joins consumer group G
and reads the partitions the group gives it, starting at the group's
committed offsets (``--from-beginning`` then only matters for partitions
with none); it commits after printing each batch of records, so a record
is printed at least once even if the command is killed. It stops after
``--max-messages`` records, after ``--timeout-ms`` without a new record, or
on Ctrl-C; the number of records read goes to stderr.

``--format json`` writes one object per record::

    {"topic": "t", "partition": 0, "offset": 7, "timestamp": 1700000000000,
     "key": "k" | null | {"base64": "..."}, "value": ..., "headers": [{"key": "h", "value": ...}]}

Keys, values and header values are UTF-8 text when they decode as such,
otherwise ``{"base64": ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Callable

from spate.cli.common import (
    add_connection_arguments,
    client_errors,
    client_security,
    decoded,
    non_negative_int,
    one_line_errors,
    positive_int,
)
from spate.cli.errors import CliError
from spate.client import Admin, CommitFailedError, Consumer, ConsumerRecord, TopicPartition

POLL_INTERVAL_MS = 200


def register(subparsers: argparse._SubParsersAction) -> None:
    consume = one_line_errors(subparsers.add_parser(
        "consume", help="print records of a topic",
        description="Print records of a topic as text or JSON lines until a limit, an idle timeout or Ctrl-C.",
    ))
    consume.add_argument("topic", metavar="TOPIC")
    consume.add_argument("--from-beginning", action="store_true",
                         help="start at the log start (default: log end; with --group, only where nothing is committed)")
    consume.add_argument("--group", metavar="GROUP",
                         help="join this consumer group, start at its committed offsets and commit after printing")
    consume.add_argument("--partition", type=non_negative_int, metavar="P", help="read only this partition")
    consume.add_argument("--offset", type=_start_offset, metavar="OFFSET",
                         help="earliest, latest or an offset to start at; needs --partition")
    consume.add_argument("--max-messages", type=positive_int, metavar="N", help="stop after N records")
    consume.add_argument("--timeout-ms", type=positive_int, metavar="MS",
                         help="stop after this long without a new record (default: wait forever)")
    consume.add_argument("--isolation-level", choices=("read_uncommitted", "read_committed"),
                         default="read_uncommitted")
    consume.add_argument("--format", choices=("text", "json"), default="text",
                         help="text: the value per line (see --print-key); json: one object per record")
    consume.add_argument("--print-key", action="store_true", help="text format: print KEY<separator>VALUE")
    consume.add_argument("--key-separator", default="\t", metavar="SEP", help="with --print-key (default: tab)")
    add_connection_arguments(consume)
    consume.set_defaults(func=run_consume)


def _start_offset(text: str) -> int | str:
    lowered = text.strip().lower()
    if lowered in ("earliest", "latest"):
        return lowered
    return non_negative_int(text)


def run_consume(args: argparse.Namespace) -> int:
    if args.offset is not None and args.partition is None:
        raise CliError("--offset needs --partition", exit_code=2)
    if args.offset is not None and args.from_beginning:
        raise CliError("give --offset or --from-beginning, not both", exit_code=2)
    if args.group is not None and (args.partition is not None or args.offset is not None):
        raise CliError("--group reads the partitions the group assigns: leave out --partition and --offset",
                       exit_code=2)
    write = _json_writer() if args.format == "json" else _text_writer(args.print_key, args.key_separator)
    count = 0
    with client_errors(args.bootstrap_server):
        partitions = _partitions(args)
        consumer = Consumer(
            args.bootstrap_server, isolation_level=args.isolation_level,
            auto_offset_reset="earliest" if args.from_beginning else "latest",
            default_api_timeout_ms=args.api_timeout_ms, request_timeout_ms=args.api_timeout_ms,
            client_id="spate-cli", group_id=args.group, enable_auto_commit=False, **client_security(args),
        )
        try:
            if args.group is None:
                consumer.assign(partitions)
                _position(consumer, partitions, args)
            else:
                consumer.subscribe([args.topic])
            idle_since = time.monotonic()
            while args.max_messages is None or count < args.max_messages:
                wait_ms = POLL_INTERVAL_MS
                if args.timeout_ms is not None:
                    left_ms = args.timeout_ms - (time.monotonic() - idle_since) * 1000
                    if left_ms <= 0:
                        break
                    wait_ms = min(wait_ms, left_ms)
                wanted = 500 if args.max_messages is None else min(500, args.max_messages - count)
                records = consumer.poll(timeout_ms=wait_ms, max_records=wanted)
                if not records:
                    continue
                idle_since = time.monotonic()
                for record in records:
                    write(record)
                count += len(records)
                sys.stdout.flush()
                if args.group is not None:
                    _commit_printed(consumer, records)
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as other command-line tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except KeyboardInterrupt:
            pass
        finally:
            consumer.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0


def _commit_printed(consumer: Consumer, records: list[ConsumerRecord]) -> None:
    """Commit past what was printed; a record is never committed before it was shown."""
    try:
        consumer.commit({TopicPartition(r.topic, r.partition): r.offset + 1 for r in records})
    except CommitFailedError as exc:
        # The group rebalanced: these partitions' new owner prints from the last commit.
        print(f"warning: {exc}", file=sys.stderr)


def _partitions(args: argparse.Namespace) -> list[TopicPartition]:
    with Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
               request_timeout_ms=args.api_timeout_ms, client_id="spate-cli", **client_security(args)) as admin:
        description = admin.describe_topics([args.topic])[args.topic]
    numbers = [p.partition for p in description.partitions]
    if args.partition is None:
        return [TopicPartition(args.topic, p) for p in numbers]
    if args.partition not in numbers:
        raise CliError(f"topic {args.topic!r} has no partition {args.partition} (it has {len(numbers)})")
    return [TopicPartition(args.topic, args.partition)]


def _position(consumer: Consumer, partitions: list[TopicPartition], args: argparse.Namespace) -> None:
    if args.offset == "earliest" or args.from_beginning:
        consumer.seek_to_beginning(*partitions)
    elif isinstance(args.offset, int):
        consumer.seek(partitions[0], args.offset)
    else:
        consumer.seek_to_end(*partitions)
    # Resolve positions now, so records written after the command starts are never skipped.
    for tp in partitions:
        consumer.position(tp)


def _text_writer(print_key: bool, separator: str) -> Callable[[ConsumerRecord], None]:
    out = sys.stdout.buffer
    sep = separator.encode("utf-8")

    def write(record: ConsumerRecord) -> None:
        value = b"null" if record.value is None else record.value
        if print_key:
            out.write((b"null" if record.key is None else record.key) + sep)
        out.write(value + b"\n")

    return write


def _json_writer() -> Callable[[ConsumerRecord], None]:
    def write(record: ConsumerRecord) -> None:
        line = json.dumps({
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": decoded(record.key),
            "value": decoded(record.value),
            "headers": [{"key": name, "value": decoded(value)} for name, value in record.headers],
        }, ensure_ascii=False)
        sys.stdout.write(line + "\n")

    return write

"""``spate produce TOPIC``: one record per input line, from stdin or ``--file``.

With ``--key-separator SEP`` each line is ``KEY SEP VALUE`` (split at the
first SEP; a line without it is an error). Every record carries the
``--header`` pairs. A one-line summary goes to stderr when input ends.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

from spate.cli.common import (
    ACKS_CHOICES,
    COMPRESSION_CHOICES,
    add_connection_arguments,
    client_errors,
    client_security,
    key_value,
    non_negative_int,
    one_line_errors,
    read_lines,
)
from spate.cli.errors import CliError
from spate.client import Producer, RecordMetadata


def register(subparsers: argparse._SubParsersAction) -> None:
    produce = one_line_errors(subparsers.add_parser(
        "produce", help="write lines from stdin or a file as records",
        description="Write each input line as one record. Reads stdin unless --file is given.",
    ))
    produce.add_argument("topic", metavar="TOPIC")
    produce.add_argument("--file", metavar="FILE", help="read records from this file instead of stdin")
    produce.add_argument("--key-separator", metavar="SEP", help="split each line into KEY SEP VALUE")
    produce.add_argument("--header", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                         help="a header on every record; repeatable")
    produce.add_argument("--partition", type=non_negative_int, metavar="P",
                         help="write every record to this partition (default: by key, else spread)")
    produce.add_argument("--acks", choices=ACKS_CHOICES, default="all", help="default: all")
    produce.add_argument("--compression", choices=COMPRESSION_CHOICES, default="none", help="default: none")
    add_connection_arguments(produce)
    produce.set_defaults(func=run_produce)


class DeliveryTally:
    """Counts delivery outcomes reported on the producer's sender thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.delivered = 0
        self.failed = 0
        self.first_error: BaseException | None = None

    def __call__(self, metadata: RecordMetadata | None, error: BaseException | None) -> None:
        with self._lock:
            if error is None:
                self.delivered += 1
            else:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = error


def run_produce(args: argparse.Namespace) -> int:
    separator = args.key_separator.encode("utf-8") if args.key_separator else None
    headers = [(name, value.encode("utf-8")) for name, value in args.header]
    tally = DeliveryTally()
    started = time.monotonic()
    sent = 0
    with client_errors(args.bootstrap_server):
        producer = Producer(
            args.bootstrap_server, acks=args.acks, compression_type=args.compression,
            max_block_ms=args.api_timeout_ms, request_timeout_ms=args.api_timeout_ms,
            delivery_timeout_ms=2 * args.api_timeout_ms + 5_000, client_id="spate-cli",
            **client_security(args),
        )
        try:
            if args.partition is not None:
                count = len(producer.partitions_for(args.topic))
                if args.partition >= count:
                    raise CliError(f"topic {args.topic!r} has no partition {args.partition} (it has {count})")
            for number, line in enumerate(read_lines(args.file), start=1):
                key = None
                if separator is not None:
                    key, found, value = line.partition(separator)
                    if not found:
                        raise CliError(f"line {number} has no key separator {args.key_separator!r}")
                else:
                    value = line
                producer.send(args.topic, value, key=key, partition=args.partition,
                              headers=headers, on_delivery=tally)
                sent += 1
            producer.flush(args.api_timeout_ms / 1000 + 5)
        finally:
            producer.close(5)
    elapsed = time.monotonic() - started
    if tally.failed:
        raise CliError(
            f"{tally.failed} of {sent} records to {args.topic} failed: {_first_line(tally.first_error)}"
        )
    print(f"Produced {tally.delivered} records to {args.topic} in {elapsed:.2f}s", file=sys.stderr)
    return 0


def _first_line(error: BaseException | None) -> str:
    return (str(error).strip() or type(error).__name__).splitlines()[0] if error else "unknown error"

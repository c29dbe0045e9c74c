"""``spate transactions list|describe``: the transactional ids the coordinators know.

The coordinators' state is the compacted topic ``__transaction_state``; the
command reads it from the beginning to its end and keeps the last value of
each transactional id (a tombstone removes it), which is exactly what a
coordinator loads when it takes a partition over.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from typing import Any

from rich.table import Table

from spate.cli.common import add_connection_arguments, client_errors, client_security, command_group, console
from spate.cli.errors import CliError
from spate.client import Admin, Consumer, TopicPartition
from spate.protocol.internal_records.transaction_log import (
    TRANSACTION_STATE_TOPIC,
    TxnLogRecordError,
    TxnState,
    decode_key,
    decode_value,
    topic_partitions,
)

NONE_SHOWN = "-"


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "transactions", "list and describe transactional ids")

    listing = commands.add_parser("list", help="every transactional id with its producer, epoch and state")
    listing.set_defaults(func=run_list)
    describe = commands.add_parser("describe", help="one transactional id, with the partitions of its transaction")
    describe.add_argument("transactional_id", metavar="TRANSACTIONAL_ID")
    describe.set_defaults(func=run_describe)
    for command in (listing, describe):
        add_connection_arguments(command)


def read_transaction_states(args: argparse.Namespace) -> dict[str, Any]:
    """The current TransactionLogValue of every transactional id, read from ``__transaction_state``."""
    with client_errors(args.bootstrap_server):
        admin = Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
                      request_timeout_ms=args.api_timeout_ms, client_id="spate-cli", **client_security(args))
        try:
            topics = admin.list_topics(include_internal=True)
            if TRANSACTION_STATE_TOPIC not in topics:
                return {}
            description = admin.describe_topics([TRANSACTION_STATE_TOPIC])[TRANSACTION_STATE_TOPIC]
        finally:
            admin.close()
        partitions = [TopicPartition(TRANSACTION_STATE_TOPIC, p.partition) for p in description.partitions]
        with Consumer(args.bootstrap_server, auto_offset_reset="earliest", client_id="spate-cli",
                      **client_security(args),
                      default_api_timeout_ms=args.api_timeout_ms, request_timeout_ms=args.api_timeout_ms) as consumer:
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            end = consumer.end_offsets(partitions)
            states: dict[str, Any] = {}
            deadline = time.monotonic() + args.api_timeout_ms / 1000
            while any(consumer.position(tp) < end[tp] for tp in partitions):
                if time.monotonic() > deadline:
                    raise CliError(f"timed out reading {TRANSACTION_STATE_TOPIC}")
                for batch in consumer.poll_batches(timeout_ms=200):
                    for key, value in zip(batch.keys, batch.values):
                        _apply(states, key, value)
    return states


def _apply(states: dict[str, Any], key: bytes | None, value: bytes | None) -> None:
    try:
        transactional_id = decode_key(key)
        if value is None:
            states.pop(transactional_id, None)
        else:
            states[transactional_id] = decode_value(transactional_id, value)
    except TxnLogRecordError as exc:
        print(f"spate: skipping an unreadable record: {exc}", file=sys.stderr)


def _state(txn: Any) -> str:
    return TxnState(txn.transaction_status).display_name


def _time(ms: int) -> str:
    if ms < 0:
        return NONE_SHOWN
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def run_list(args: argparse.Namespace) -> int:
    states = read_transaction_states(args)
    out = console()
    if not states:
        out.print("No transactional ids.")
        return 0
    table = Table("TRANSACTIONAL-ID", "PRODUCER-ID", "EPOCH", "STATE", "PARTITIONS", "TIMEOUT-MS", "LAST-UPDATE")
    for txn_id in sorted(states):
        txn = states[txn_id]
        table.add_row(txn_id, str(txn.producer_id), str(txn.producer_epoch), _state(txn),
                      str(len(topic_partitions(txn))), str(txn.transaction_timeout_ms),
                      _time(txn.transaction_last_update_timestamp_ms))
    out.print(table)
    return 0


def run_describe(args: argparse.Namespace) -> int:
    txn = read_transaction_states(args).get(args.transactional_id)
    if txn is None:
        raise CliError(f"transactional id {args.transactional_id!r} is not known to the coordinators")
    out = console()
    out.print(f"Transactional id: {args.transactional_id}", soft_wrap=True)
    out.print(f"Producer id: {txn.producer_id}  Epoch: {txn.producer_epoch}  State: {_state(txn)}")
    out.print(f"Timeout: {txn.transaction_timeout_ms} ms  Started: {_time(txn.transaction_start_timestamp_ms)}  "
              f"Last update: {_time(txn.transaction_last_update_timestamp_ms)}")
    partitions = topic_partitions(txn)
    if partitions:
        table = Table("TOPIC", "PARTITION")
        for tp in sorted(partitions):
            table.add_row(tp.topic, str(tp.partition))
        out.print(table)
    else:
        out.print("No partitions in a transaction.")
    return 0

"""``spate transactions list|describe|describe-producers|find-hanging``, as ``kafka-transactions.sh``.

``list`` and ``describe`` show the transactional ids the coordinators know.
Their state is the compacted topic ``__transaction_state``; the command
reads it from the beginning to its end and keeps the last value of each
transactional id (a tombstone removes it), which is exactly what a
coordinator loads when it takes a partition over.

``describe-producers`` asks a partition's leader which producers it
remembers (DescribeProducers), and ``find-hanging`` looks for transactions a
partition holds open that their coordinator no longer does (KIP-664): an
open transaction older than ``--max-transaction-timeout`` minutes, or one
whose coordinator has no Ongoing or Prepare transaction of that producer on
that partition. A hanging transaction holds back the last stable offset, so
read_committed consumers stall at it.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from typing import Any

from rich.table import Table

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    client_security,
    command_group,
    console,
    non_negative_int,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client import Admin, Consumer, TopicPartition
from spate.client.admin.transaction_admin import ProducerState
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
    producers = commands.add_parser("describe-producers", help="the producers a partition's leader remembers")
    producers.add_argument("--topic", required=True)
    producers.add_argument("--partition", type=non_negative_int, required=True)
    producers.set_defaults(func=run_describe_producers)
    hanging = commands.add_parser("find-hanging", help="open transactions their coordinator no longer knows of")
    hanging.add_argument("--topic", required=True)
    hanging.add_argument("--partition", type=non_negative_int, help="one partition (default: every partition)")
    hanging.add_argument("--max-transaction-timeout", type=non_negative_int, default=15, metavar="MINUTES",
                         help="a transaction open longer than this is hanging (default: 15, Kafka's maximum)")
    hanging.set_defaults(func=run_find_hanging)
    for command in (listing, describe, producers, hanging):
        add_connection_arguments(command)
        add_output_argument(command)


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


def _txn_document(txn_id: str, txn: Any) -> dict[str, Any]:
    return {
        "transactional_id": txn_id, "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
        "state": _state(txn), "transaction_timeout_ms": txn.transaction_timeout_ms,
        "start_timestamp_ms": txn.transaction_start_timestamp_ms,
        "last_update_timestamp_ms": txn.transaction_last_update_timestamp_ms,
        "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(topic_partitions(txn))],
    }


def _producer_document(p: ProducerState) -> dict[str, Any]:
    return {
        "producer_id": p.producer_id, "producer_epoch": p.producer_epoch, "coordinator_epoch": p.coordinator_epoch,
        "last_sequence": p.last_sequence, "last_timestamp_ms": p.last_timestamp,
        "current_transaction_start_offset": p.current_txn_start_offset if p.current_txn_start_offset >= 0 else None,
    }


def run_list(args: argparse.Namespace) -> int:
    states = read_transaction_states(args)
    if args.output == "json":
        print_json({"transactions": [_txn_document(txn_id, states[txn_id]) for txn_id in sorted(states)]})
        return 0
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
    if args.output == "json":
        print_json(_txn_document(args.transactional_id, txn))
        return 0
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


def run_describe_producers(args: argparse.Namespace) -> int:
    tp = TopicPartition(args.topic, args.partition)
    admin = open_admin(args)
    with client_errors(args.bootstrap_server):
        try:
            producers = admin.describe_producers([tp])[tp]
        finally:
            admin.close()
    if args.output == "json":
        print_json({"topic": tp.topic, "partition": tp.partition, "producers": [_producer_document(p) for p in producers]})
        return 0
    out = console()
    if not producers:
        out.print(f"No producers on {tp.topic}-{tp.partition}.")
        return 0
    table = Table("PRODUCER-ID", "EPOCH", "LATEST-COORDINATOR-EPOCH", "LAST-SEQUENCE", "LAST-TIMESTAMP",
                  "CURRENT-TRANSACTION-START-OFFSET")
    for p in producers:
        start = str(p.current_txn_start_offset) if p.current_txn_start_offset >= 0 else "None"
        table.add_row(str(p.producer_id), str(p.producer_epoch), str(p.coordinator_epoch), str(p.last_sequence),
                      _time(p.last_timestamp), start)
    out.print(table)
    return 0


def run_find_hanging(args: argparse.Namespace) -> int:
    admin = open_admin(args)
    with client_errors(args.bootstrap_server):
        try:
            hanging = _find_hanging(admin, args)
        finally:
            admin.close()
    if args.output == "json":
        print_json({"hanging": [{"topic": tp.topic, "partition": tp.partition, **_producer_document(p)}
                                for tp, p in hanging]})
        return 0
    out = console()
    if not hanging:
        out.print("No hanging transactions.")
        return 0
    table = Table("TOPIC", "PARTITION", "PRODUCER-ID", "EPOCH", "COORDINATOR-EPOCH", "START-OFFSET",
                  "LAST-TIMESTAMP", "DURATION-MIN")
    now = time.time() * 1000
    for tp, p in hanging:
        table.add_row(tp.topic, str(tp.partition), str(p.producer_id), str(p.producer_epoch),
                      str(p.coordinator_epoch), str(p.current_txn_start_offset), _time(p.last_timestamp),
                      str(int((now - p.last_timestamp) // 60_000)))
    out.print(table)
    return 0


def _find_hanging(admin: Admin, args: argparse.Namespace) -> list[tuple[TopicPartition, ProducerState]]:
    if args.partition is not None:
        partitions = [TopicPartition(args.topic, args.partition)]
    else:
        description = admin.describe_topics([args.topic])[args.topic]
        partitions = [TopicPartition(args.topic, p.partition) for p in description.partitions]
    open_txns = [(tp, p) for tp, producers in admin.describe_producers(partitions).items()
                 for p in producers if p.current_txn_start_offset >= 0]
    max_open_ms = args.max_transaction_timeout * 60_000
    now = time.time() * 1000
    hanging = [(tp, p) for tp, p in open_txns if now - p.last_timestamp > max_open_ms]
    candidates = [(tp, p) for tp, p in open_txns if now - p.last_timestamp <= max_open_ms]
    if not candidates:
        return hanging
    listed = admin.list_transactions(producer_ids={p.producer_id for _, p in candidates})
    by_producer = {t.producer_id: t.transactional_id for t in listed}
    described = admin.describe_transactions(set(by_producer.values())) if by_producer else {}
    for tp, p in candidates:
        txn = described.get(by_producer.get(p.producer_id, ""))
        known = (txn is not None and txn.producer_epoch == p.producer_epoch and tp in txn.partitions
                 and txn.state in ("Ongoing", "PrepareCommit", "PrepareAbort"))
        if not known:
            hanging.append((tp, p))
    return sorted(hanging, key=lambda item: (item[0], item[1].producer_id))

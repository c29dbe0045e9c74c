"""``kafka-transactions.sh list`` and ``describe --transactional-id ID``, over ``spate transactions``' code.

The output is Kafka's: a header row and one row per transactional id, each
cell padded to its column's width and followed by a tab. The coordinator is
the broker that leads the transactional id's partition of
``__transaction_state``. The other subcommands of Kafka's tool
(describe-producers, abort, find-hanging) are not supported.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

from spate.cli import transactions as spate_transactions
from spate.cli.common import client_errors, open_admin
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, run_tool, spate_args
from spate.protocol.internal_records.transaction_log import TRANSACTION_STATE_TOPIC, TxnState, topic_partitions

PROG = "kafka-transactions.sh"
UNSUPPORTED_COMMANDS = ("describe-producers", "abort", "find-hanging", "force-terminate")
NO_TIME = -1


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "List and describe transactions.")
    commands = parser.add_subcommands()
    commands.add_parser("list", help="every transactional id, its coordinator, producer id and state")
    describe = commands.add_parser("describe", help="one transactional id and the partitions of its transaction")
    describe.add_argument("--transactional-id", required=True, metavar="ID")
    for name in UNSUPPORTED_COMMANDS:
        commands.add_parser(name, add_help=False, prefix_chars="\0").add_argument("rest", nargs="*")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    if args.command in UNSUPPORTED_COMMANDS:
        raise ToolUsageError(f"the {args.command} command is not supported")
    if args.command is None:
        raise ToolUsageError("give a command: list or describe")
    states = spate_transactions.read_transaction_states(spate_args(args))
    coordinators = _coordinators(args)
    if args.command == "list":
        rows = [[txn_id, str(coordinators(txn_id)), str(txn.producer_id), _state(txn)]
                for txn_id, txn in sorted(states.items())]
        print_table(["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], rows)
        return 0
    txn = states.get(args.transactional_id)
    if txn is None:
        raise CliError(f"TransactionalIdNotFoundException: The transactionalId '{args.transactional_id}' "
                       "is not known to the coordinators")
    print_table(
        ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
         "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"],
        [_describe_row(args.transactional_id, txn, coordinators(args.transactional_id))],
    )
    return 0


def _describe_row(txn_id: str, txn: Any, coordinator: int) -> list[str]:
    started = txn.transaction_start_timestamp_ms
    open_txn = started != NO_TIME and _state(txn) in ("Ongoing", "PrepareCommit", "PrepareAbort")
    duration = str(int(time.time() * 1000) - started) if open_txn else "None"
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(topic_partitions(txn)))
    return [str(coordinator), txn_id, str(txn.producer_id), str(txn.producer_epoch), _state(txn),
            str(txn.transaction_timeout_ms), str(started) if open_txn else "None", duration, partitions]


def _state(txn: Any) -> str:
    return TxnState(txn.transaction_status).display_name


def _coordinators(args: argparse.Namespace) -> Any:
    """transactional id -> the broker leading its ``__transaction_state`` partition (-1 when unknown)."""
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        if TRANSACTION_STATE_TOPIC not in admin.list_topics(include_internal=True):
            return lambda txn_id: -1
        partitions = admin.describe_topics([TRANSACTION_STATE_TOPIC])[TRANSACTION_STATE_TOPIC].partitions
    return lambda txn_id: partitions[java_string_hash(txn_id) % len(partitions)].leader


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` made non-negative as Kafka's ``Utils.abs`` does (the partitioning of
    transactional ids and group ids over their internal topics)."""
    value = 0
    for unit in _utf16_units(text):
        value = (31 * value + unit) & 0xFFFFFFFF
    return value & 0x7FFFFFFF


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        print("".join(cell.ljust(width) + "\t" for cell, width in zip(row, widths)))


def run() -> None:
    sys.exit(run_tool(main))

"""``spate topics elect-leaders``: make the preferred replica (or, unclean, any replica) lead again.

After brokers restart, leadership piles up on the brokers that stayed; a
preferred election hands each partition back to its first replica. The
partitions are one (``--topic T --partition P``), a topic's (``--topic T``)
or every partition of the cluster (``--all-topic-partitions``). Partitions
whose preferred replica already leads are reported as such, not as failures;
any other refusal is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    non_negative_int,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client import ErrorCode, TopicPartition

USAGE = 2


def register(commands: argparse._SubParsersAction) -> None:
    elect = commands.add_parser(
        "elect-leaders", help="elect the preferred (or an unclean) leader for partitions",
        description="Ask the cluster to elect leaders: --preferred hands each partition back to its first "
        "replica; --unclean lets an out-of-sync replica lead a partition that has no leader (records may be lost).",
    )
    kind = elect.add_mutually_exclusive_group(required=True)
    kind.add_argument("--preferred", action="store_true", help="elect the preferred (first) replica")
    kind.add_argument("--unclean", action="store_true", help="elect any live replica, even one out of sync")
    scope = elect.add_mutually_exclusive_group(required=True)
    scope.add_argument("--topic", metavar="TOPIC", help="the partitions of this topic")
    scope.add_argument("--all-topic-partitions", action="store_true", help="every partition of the cluster")
    elect.add_argument("--partition", type=non_negative_int, metavar="P", help="only this partition of --topic")
    add_connection_arguments(elect)
    add_output_argument(elect)
    elect.set_defaults(func=run_elect_leaders)


def elect_leaders(args: argparse.Namespace) -> tuple[str, dict[TopicPartition, ErrorCode]]:
    """The election asked for (``preferred`` or ``unclean``) and each partition's outcome."""
    if args.partition is not None and args.topic is None:
        raise CliError("--partition needs --topic", exit_code=USAGE)
    election = "unclean" if args.unclean else "preferred"
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        partitions: list[TopicPartition] | None = None
        if args.topic is not None and args.partition is not None:
            partitions = [TopicPartition(args.topic, args.partition)]
        elif args.topic is not None:
            described = admin.describe_topics([args.topic])[args.topic]
            partitions = [TopicPartition(args.topic, p.partition) for p in described.partitions]
        return election, admin.elect_leaders(election, partitions)


def run_elect_leaders(args: argparse.Namespace) -> int:
    election, results = elect_leaders(args)
    elected = [tp for tp, code in results.items() if code == ErrorCode.NONE]
    not_needed = [tp for tp, code in results.items() if code == ErrorCode.ELECTION_NOT_NEEDED]
    if args.output == "json":
        print_json({
            "election_type": election,
            "elected": [{"topic": tp.topic, "partition": tp.partition} for tp in elected],
            "not_needed": [{"topic": tp.topic, "partition": tp.partition} for tp in not_needed],
        })
        return 0
    if elected:
        print(f"Elected the {election} leader of {len(elected)} partition(s): {_names(elected)}")
    if not_needed:
        print(f"A valid leader was already elected for {len(not_needed)} partition(s): {_names(not_needed)}")
    if not results:
        print("No partition to elect a leader for.")
    return 0


def _names(partitions: list[TopicPartition]) -> str:
    return ", ".join(str(tp) for tp in partitions)

"""``kafka-leader-election.sh``: elect preferred or unclean leaders, as ``spate topics elect-leaders`` does.

The partitions are ``--all-topic-partitions``, ``--topic`` with
``--partition``, or a ``--path-to-json-file`` of
``{"partitions": [{"topic": "t", "partition": 0}]}``; one of them is needed,
as in Kafka's tool.
"""

from __future__ import annotations

import json
import sys
from typing import Sequence

from spate.cli import leader_election as spate_election
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, run_tool, spate_args
from spate.client import ErrorCode, TopicPartition

PROG = "kafka-leader-election.sh"
ELECTION_TYPES = ("preferred", "unclean")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Elect the preferred or an unclean leader for partitions.")
    parser.add_argument("--election-type", metavar="PREFERRED|UNCLEAN")
    parser.add_argument("--all-topic-partitions", action="store_true")
    parser.add_argument("--topic", metavar="TOPIC")
    parser.add_argument("--partition", type=int, metavar="P")
    parser.add_argument("--path-to-json-file", metavar="FILE")
    parser.add_argument("--admin.config", dest="admin_config", metavar="FILE")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    kind = (args.election_type or "").strip().lower()
    if kind not in ELECTION_TYPES:
        raise ToolUsageError("Missing or invalid --election-type: give PREFERRED or UNCLEAN")
    scopes = [bool(args.all_topic_partitions), args.topic is not None, args.path_to_json_file is not None]
    if sum(scopes) != 1:
        raise ToolUsageError("One and only one of the following options is required: "
                             "--all-topic-partitions, --topic, --path-to-json-file")
    if args.topic is not None and args.partition is None:
        raise ToolUsageError("--partition is required with --topic")
    if args.path_to_json_file is not None:
        targets = list(dict.fromkeys(_partitions_of_file(args.path_to_json_file)))
    else:
        targets = [(args.topic, args.partition)]
    results: dict[TopicPartition, ErrorCode] = {}
    for topic, partition in targets:
        _, outcome = spate_election.elect_leaders(spate_args(
            args, preferred=kind == "preferred", unclean=kind == "unclean", topic=topic, partition=partition,
            all_topic_partitions=args.all_topic_partitions,
        ))
        results.update(outcome)
    return report(kind.upper(), results)


def _partitions_of_file(path: str) -> list[tuple[str, int]]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        return [(entry["topic"], int(entry["partition"])) for entry in document["partitions"]]
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError):
        raise ToolUsageError(f'{path}: expected {{"partitions": [{{"topic": "t", "partition": 0}}, ...]}}') from None


def report(election: str, results: dict[TopicPartition, ErrorCode]) -> int:
    """Kafka's lines: the partitions elected, those that already had a valid leader, then each failure."""
    def names(partitions: list[TopicPartition]) -> str:
        return ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions)

    elected = sorted(tp for tp, code in results.items() if code == ErrorCode.NONE)
    not_needed = sorted(tp for tp, code in results.items() if code == ErrorCode.ELECTION_NOT_NEEDED)
    failed = sorted((tp, code) for tp, code in results.items()
                    if code not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED))
    if elected:
        print(f"Successfully completed leader election ({election}) for partitions {names(elected)}")
    if not_needed:
        print(f"Valid replica already elected for partitions {names(not_needed)}")
    for tp, code in failed:
        print(f"Error completing leader election ({election}) for partition: {tp.topic}-{tp.partition}: {code.name}")
    if failed:
        raise CliError(f"{len(failed)} replica(s) could not be elected")
    return 0


def run() -> None:
    sys.exit(run_tool(main))

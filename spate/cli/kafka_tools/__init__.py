"""Kafka's command-line tools by their names, over the ``spate`` command's code.

Operators' scripts call ``kafka-topics.sh``, ``kafka-configs.sh`` and the
rest with Kafka's flags and read Kafka's output; each module here is one
such tool: it reads Kafka's flags (:mod:`tool`), calls the code of the
``spate`` command that does the same, and prints what Kafka's tool prints
where scripts read it. The tools are installed as console scripts, and the
repository's ``bin/`` folder holds them as shell scripts, so ``KAFKA_PATH``
may point at the repository.
"""

from __future__ import annotations

# Tool name -> the module that implements it (each has ``main(argv) -> int``).
TOOLS = {
    "kafka-topics.sh": "topics",
    "kafka-configs.sh": "configs",
    "kafka-consumer-groups.sh": "consumer_groups",
    "kafka-acls.sh": "acls",
    "kafka-console-producer.sh": "console_producer",
    "kafka-console-consumer.sh": "console_consumer",
    "kafka-transactions.sh": "transactions",
    "kafka-leader-election.sh": "leader_election",
    "kafka-reassign-partitions.sh": "reassign_partitions",
}

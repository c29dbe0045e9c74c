#!/bin/sh
# Kafka's kafka-consumer-groups.sh, served by Spate: the same flags, Kafka's output where scripts read it.
exec "$(dirname "$(readlink -f "$0")")/spate-kafka-tool" kafka-consumer-groups.sh "$@"

#!/bin/sh
# Kafka's kafka-configs.sh, served by Spate: the same flags, Kafka's output where scripts read it.
exec "$(dirname "$(readlink -f "$0")")/spate-kafka-tool" kafka-configs.sh "$@"

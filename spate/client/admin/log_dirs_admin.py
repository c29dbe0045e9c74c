"""DescribeLogDirs: how much disk each partition takes on its leader.

The size of a partition is the size of its leader's log (segments and
indexes as Kafka counts them); followers hold about as much. Partitions are
asked of their leaders only, one DescribeLogDirs per leader naming just
those partitions, so a topic's sizes cost one round trip per broker.
"""

from __future__ import annotations

from typing import Iterable

from spate.client.errors import AdminError
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.describe_log_dirs import DescribeLogDirsRequest
from spate.structs import TopicPartition, group_by_topic


class LogDirsAdmin:
    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def partition_sizes(self, partitions: Iterable[TopicPartition], deadline: float) -> dict[TopicPartition, int]:
        """Bytes on disk of each partition's leader log; a partition without a leader or log is left out."""
        call: KeyedCall[TopicPartition] = KeyedCall({tp: tp for tp in partitions})

        def attempt(deadline: float) -> None:
            snapshot = self._network.fetch_metadata({tp.topic for tp in call.pending}, deadline=deadline)
            by_leader, leaderless = snapshot.by_leader(call.pending)
            for tp in leaderless:
                call.fail(tp, KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {tp}"))
            for node, led in by_leader.items():
                self._sizes_on(node, led, call, deadline)

        try:
            self._retrier.call_each("describe_log_dirs", call, attempt, deadline)
        except AdminError:
            pass  # the partitions that failed are left out; the others have their sizes
        return dict(call.results)

    def _sizes_on(self, node: int, partitions: list[TopicPartition], call: KeyedCall[TopicPartition],
                  deadline: float) -> None:
        Q = DescribeLogDirsRequest
        by_topic = group_by_topic(partitions, value=lambda tp: tp.partition)
        body = Q(topics=[Q.DescribableLogDirTopic(topic=name, partitions=indexes) for name, indexes in by_topic.items()])
        _, response = self._network.request(node, ApiKey.DESCRIBE_LOG_DIRS, body, deadline=deadline)
        code = ErrorCode.of(getattr(response, "error_code", 0))
        if code != ErrorCode.NONE:
            for tp in partitions:
                call.fail(tp, KafkaError(code, f"describe the log dirs of broker {node}"))
            return
        for result in response.results:
            if ErrorCode.of(result.error_code) != ErrorCode.NONE:
                continue  # a failed log dir: its partitions are offline and have no size to report
            for topic in result.topics:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    if tp in call and not part.is_future_key:
                        call.succeed(tp, part.partition_size)
        for tp in partitions:
            if tp in call.pending:
                call.fail(tp, KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"broker {node} reports no log for {tp}"))

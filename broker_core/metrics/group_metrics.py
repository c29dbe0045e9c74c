"""Consumer groups this broker coordinates, and their lag.

- ``kafka_coordinator_group_groupmetadatamanager_numgroups{state}``: groups by
  state (``Empty``, ``PreparingRebalance``, ``CompletingRebalance``, ``Stable``,
  ``Dead``; Kafka's NumGroups<State> gauges as one labelled family);
- ``kafka_coordinator_group_groupmetadatamanager_numoffsets``: committed offsets held;
- ``kafka_consumergroup_current_offset{group,topic,partition}``: the committed offset;
- ``kafka_consumergroup_lag{group,topic,partition}``: the partition's high watermark
  minus the committed offset (never below 0), the names kafka_exporter uses.

Lag is computed on the coordinator, for partitions whose high watermark this
broker knows, i.e. that it hosts as leader or follower (every partition on the
embedded broker). Elsewhere the committed offset is still reported.
"""

from __future__ import annotations

from typing import Any, Iterable

from broker_core.coordinator.group.group_metadata import GroupState

MANAGER = "kafka_coordinator_group_groupmetadatamanager_"


class GroupCollector:
    def __init__(self, group_manager: Any, replicas: Any) -> None:
        """``group_manager``: the GroupMetadataManager; ``replicas``: the ReplicaManager (for high watermarks)."""
        self._groups = group_manager
        self._replicas = replicas

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import GaugeMetricFamily

        groups = self._groups.groups() if self._groups.is_active else []
        by_state = {state.value: 0 for state in GroupState}
        for group in groups:
            by_state[group.state.value] += 1
        states = GaugeMetricFamily(MANAGER + "numgroups", "Groups coordinated here, by state.", labels=["state"])
        for state, count in by_state.items():
            states.add_metric([state], count)
        yield states
        labels = ["group", "topic", "partition"]
        current = GaugeMetricFamily("kafka_consumergroup_current_offset", "A group's committed offset.",
                                    labels=labels)
        lag = GaugeMetricFamily("kafka_consumergroup_lag",
                                "High watermark minus a group's committed offset.", labels=labels)
        offsets = 0
        for group in sorted(groups, key=lambda g: g.group_id):
            for tp, committed in sorted(group.offsets.items()):
                offsets += 1
                key = [group.group_id, tp.topic, str(tp.partition)]
                current.add_metric(key, committed.offset)
                partition = self._replicas.hosted(tp.topic, tp.partition)
                if partition is not None:
                    lag.add_metric(key, max(0, partition.high_watermark - committed.offset))
        yield GaugeMetricFamily(MANAGER + "numoffsets", "Committed offsets held for groups coordinated here.",
                                value=offsets)
        yield current
        yield lag

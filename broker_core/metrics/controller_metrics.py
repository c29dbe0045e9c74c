"""The controller's view of the cluster (Kafka's ``kafka.controller:type=KafkaController`` MBeans).

- ``kafka_controller_kafkacontroller_activecontrollercount``: 1 on the broker
  that is the active controller, 0 elsewhere (the embedded broker is its own
  controller), so ``sum()`` over the cluster should be exactly 1;
- ``globaltopiccount``, ``globalpartitioncount``, ``offlinepartitionscount``
  (partitions with no leader): reported by the active controller only, 0 on
  the others, as Kafka does, from the metadata this broker holds.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

PREFIX = "kafka_controller_kafkacontroller_"


class ControllerCollector:
    def __init__(self, is_active: Callable[[], bool], view: Any) -> None:
        """``view``: the broker's MetadataView (topic names and each topic's partitions)."""
        self._is_active = is_active
        self._view = view

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import GaugeMetricFamily

        active = self._is_active()
        topics = partitions = offline = 0
        if active:
            for name in self._view.topic_names():
                try:
                    described = self._view.get_topic(name)
                except Exception:  # deleted between the two reads
                    continue
                topics += 1
                partitions += len(described.partitions)
                offline += sum(1 for p in described.partitions.values() if not p.has_leader)
        yield GaugeMetricFamily(PREFIX + "activecontrollercount", "1 on the active controller, else 0.",
                                value=1 if active else 0)
        yield GaugeMetricFamily(PREFIX + "globaltopiccount", "Topics in the cluster (active controller only).",
                                value=topics)
        yield GaugeMetricFamily(PREFIX + "globalpartitioncount",
                                "Partitions in the cluster (active controller only).", value=partitions)
        yield GaugeMetricFamily(PREFIX + "offlinepartitionscount",
                                "Partitions without a leader (active controller only).", value=offline)

"""The active controller reports itself and the cluster's partitions; the others report 0."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.metrics.controller_metrics import ControllerCollector
from tests.broker.metrics.samples import registry_of, value

P = "kafka_controller_kafkacontroller_"


def view() -> SimpleNamespace:
    topics = {
        "a": {0: SimpleNamespace(has_leader=True), 1: SimpleNamespace(has_leader=False)},
        "b": {0: SimpleNamespace(has_leader=True)},
    }
    return SimpleNamespace(topic_names=lambda: list(topics),
                           get_topic=lambda name: SimpleNamespace(partitions=topics[name]))


def test_the_active_controller_counts_topics_partitions_and_those_without_a_leader() -> None:
    registry = registry_of(ControllerCollector(lambda: True, view()))
    assert value(registry, P + "activecontrollercount") == 1
    assert value(registry, P + "globaltopiccount") == 2
    assert value(registry, P + "globalpartitioncount") == 3
    assert value(registry, P + "offlinepartitionscount") == 1


def test_another_broker_reports_zero_for_all() -> None:
    registry = registry_of(ControllerCollector(lambda: False, view()))
    for name in ("activecontrollercount", "globaltopiccount", "globalpartitioncount", "offlinepartitionscount"):
        assert value(registry, P + name) == 0

"""One fault scenario's frame: a replicated topic, the workload writing throughout, and the checks at the end.

:func:`start_scenario` creates an RF 3 topic (``min.insync.replicas=2``)
and starts an :class:`~tests.support.faults.workload.IdempotentWorkload` on
it; the test then injects its faults; :meth:`FaultScenario.finish` waits
(bounded) for the cluster to settle with every replica back in the ISR,
lets the workload write a little more on the healed cluster, stops it,
reads everything back with ``read_committed`` and checks both criteria: the
history (nothing acknowledged lost, nothing duplicated, order kept) and the
replicas' logs (identical batches below each partition's high watermark).
The figures are printed either way, before anything is asserted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tests.support.faults.cluster import FaultCluster
from tests.support.faults.figures import FaultFigures
from tests.support.faults.history import HistoryReport, check_history
from tests.support.faults.leadership import wait_for_identical_replicas, wait_until_in_sync
from tests.support.faults.workload import IdempotentWorkload, read_committed

PARTITIONS = 3
RATE = 200  # values per second, over all partitions
# Bounds the workload's memory, not its duration: at RATE this is hours of writing.
MAX_VALUES = 2_000_000
# Acknowledgements to see before the first fault, and on the healed cluster before the end.
WARM_UP_ACKS = 300
SETTLED_ACKS = 300


@dataclass
class FaultScenario:
    cluster: FaultCluster
    topic: str
    workload: IdempotentWorkload
    figures: FaultFigures

    @property
    def partitions(self) -> int:
        return self.workload.history.partitions

    def __enter__(self) -> FaultScenario:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.workload.running():  # the test failed before finish: stop writing, keep the first error
            try:
                self.workload.stop(flush_timeout_s=5)
            except AssertionError:
                pass

    def finish(self) -> HistoryReport:
        """Settle, stop the workload, read back, publish the figures, then assert the criteria."""
        wait_until_in_sync(self.cluster, [self.topic])
        self.workload.wait_for_acks(SETTLED_ACKS)
        history = self.workload.stop()
        report = check_history(history, read_committed(self.cluster.bootstrap, self.topic, self.partitions))
        self.figures.add_history(report)
        try:
            wait_for_identical_replicas(self.cluster, [self.topic])
        finally:
            self.figures.publish()
        if history.fatal_error is not None:
            raise AssertionError(f"the idempotent producer failed fatally: {history.fatal_error}")
        if not report.ok:
            raise AssertionError(report.summary())
        return report


def start_scenario(cluster: FaultCluster, topic: str, scenario: str, *, partitions: int = PARTITIONS,
                   rate: float = RATE) -> FaultScenario:
    """Create ``topic`` (RF 3, min.insync.replicas 2) and start writing to it, on every live broker."""
    cluster.create_topic(topic, partitions=partitions, replication_factor=3)
    wait_until_in_sync(cluster, [topic])
    workload = IdempotentWorkload(cluster.bootstrap, topic, partitions, rate=rate, max_values=MAX_VALUES).start()
    workload.wait_for_acks(WARM_UP_ACKS)
    return FaultScenario(cluster, topic, workload, FaultFigures(scenario))


def seconds_since(instant: float) -> float:
    return time.monotonic() - instant

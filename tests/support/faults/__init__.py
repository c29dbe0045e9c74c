"""Tooling for the replication fault tests: the faults, the workload, and the checks.

The fault model (what these tools inject, on real broker processes):

* **network**: one broker cut off from the other brokers (both ways) and
  from ZooKeeper while clients still reach it; one link between two brokers
  cut; a broker's ZooKeeper link cut or silent (:mod:`.cluster`);
* **processes**: a broker crashed (SIGKILL), paused (SIGSTOP) and resumed
  (SIGCONT), or restarted (:mod:`.cluster`).

The workload is an idempotent acks=all producer recording every
acknowledgement and failure, then a read_committed read of everything
(:mod:`.workload`); the checks are the history checker (acknowledged but
lost, duplicated, out of order: :mod:`.history`) and a byte-for-byte
comparison of the replicas' logs below the high watermark
(:mod:`.replica_logs`). Every wait is bounded in time, every workload in
count.
"""

from tests.support.faults.cluster import FaultCluster, broker_name, running_fault_cluster
from tests.support.faults.history import HistoryReport, WorkloadHistory, check_history
from tests.support.faults.replica_logs import ReplicaDifference, compare_replicas, read_replica_log
from tests.support.faults.workload import IdempotentWorkload, read_committed

__all__ = [
    "FaultCluster",
    "HistoryReport",
    "IdempotentWorkload",
    "ReplicaDifference",
    "WorkloadHistory",
    "broker_name",
    "check_history",
    "compare_replicas",
    "read_committed",
    "read_replica_log",
    "running_fault_cluster",
]

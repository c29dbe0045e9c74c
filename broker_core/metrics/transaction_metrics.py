"""Producer ids and transactions.

- ``kafka_server_replicamanager_produceridcount``: producer ids with state in
  the hosted partitions' logs, summed over partitions (Kafka's ProducerIdCount);
- ``kafka_coordinator_transaction_transactionstatemanager_numtransactions{state}``:
  transactional ids this broker coordinates, by state (``Empty``, ``Ongoing``,
  ``PrepareCommit``, ``PrepareAbort``, ``CompleteCommit``, ``CompleteAbort``,
  ``Dead``, ``PrepareEpochFence``).
"""

from __future__ import annotations

from typing import Any, Iterable

from spate.protocol.internal_records.transaction_log import TxnState


class TransactionCollector:
    def __init__(self, txn_state: Any, replicas: Any) -> None:
        """``txn_state``: the TransactionStateManager (iterates the coordinated ids); ``replicas``: the ReplicaManager."""
        self._txn_state = txn_state
        self._replicas = replicas

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import GaugeMetricFamily

        producers = sum(len(p.log.producer_state.active_producers()) for p in self._replicas)
        yield GaugeMetricFamily("kafka_server_replicamanager_produceridcount",
                                "Producer ids with state in the hosted partitions.", value=producers)
        by_state = {state.display_name: 0 for state in TxnState}
        for txn in self._txn_state:
            by_state[txn.state.display_name] += 1
        family = GaugeMetricFamily("kafka_coordinator_transaction_transactionstatemanager_numtransactions",
                                   "Transactional ids coordinated here, by state.", labels=["state"])
        for state, count in by_state.items():
            family.add_metric([state], count)
        yield family

"""Producer ids with state, and transactional ids by state."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.metrics.transaction_metrics import TransactionCollector
from spate.protocol.internal_records.transaction_log import TxnState
from tests.broker.metrics.fakes import FakePartition, FakeReplicas
from tests.broker.metrics.samples import registry_of, value

NUM = "kafka_coordinator_transaction_transactionstatemanager_numtransactions"


def test_producer_ids_are_summed_over_hosted_partitions() -> None:
    replicas = FakeReplicas(FakePartition("a", 0, producers=2), FakePartition("a", 1, is_leader=False, producers=3))
    registry = registry_of(TransactionCollector([], replicas))
    assert value(registry, "kafka_server_replicamanager_produceridcount") == 5


def test_transactions_are_counted_by_state_with_kafkas_state_names() -> None:
    txns = [SimpleNamespace(state=s) for s in (TxnState.ONGOING, TxnState.ONGOING, TxnState.COMPLETE_COMMIT)]
    registry = registry_of(TransactionCollector(txns, FakeReplicas()))
    assert value(registry, NUM, state="Ongoing") == 2
    assert value(registry, NUM, state="CompleteCommit") == 1
    assert value(registry, NUM, state="PrepareAbort") == 0

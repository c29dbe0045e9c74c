"""The transaction coordinator and its state in ``__transaction_state``."""

from broker_core.coordinator.transaction.txn_config import TxnConfig
from broker_core.coordinator.transaction.txn_coordinator import InitProducerIdResult, TransactionCoordinator
from broker_core.coordinator.transaction.txn_markers import MarkerOutcome, MarkerRequest, MarkersDone, MarkerWriter
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import TxnState
from broker_core.coordinator.transaction.txn_state_manager import TransactionStateManager

__all__ = [
    "InitProducerIdResult",
    "MarkerOutcome",
    "MarkerRequest",
    "MarkerWriter",
    "MarkersDone",
    "TransactionCoordinator",
    "TransactionStateManager",
    "TxnConfig",
    "TxnMetadata",
    "TxnState",
]

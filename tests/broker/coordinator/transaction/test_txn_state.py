"""The transaction state machine: Kafka's legal transitions, and nothing else."""

from __future__ import annotations

import pytest

from broker_core.coordinator.transaction import TxnState
from broker_core.coordinator.transaction.txn_state import IllegalTransitionError, check_transition


def test_illegal_transitions_are_refused():
    check_transition("t", None, TxnState.EMPTY)
    check_transition("t", TxnState.ONGOING, TxnState.PREPARE_COMMIT)
    for current, target in [(None, TxnState.ONGOING), (TxnState.EMPTY, TxnState.PREPARE_COMMIT),
                            (TxnState.PREPARE_COMMIT, TxnState.COMPLETE_ABORT),
                            (TxnState.COMPLETE_COMMIT, TxnState.PREPARE_ABORT)]:
        with pytest.raises(IllegalTransitionError):
            check_transition("t", current, target)

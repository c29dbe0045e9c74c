"""The states of a transactional id and the transitions between them (Kafka's state machine).

::

    Empty ──AddPartitions──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers──▶ CompleteCommit
      ▲                        │    └──EndTxn(abort), fence, timeout──▶ PrepareAbort ──markers──▶ CompleteAbort
      └────InitProducerId──────┴─────────────── (from Empty / Complete*) ◀──────────────────────────┘

``Ongoing`` may also follow ``Complete*`` directly: the next transaction's
first AddPartitionsToTxn starts it. ``Dead`` is an expired id about to be
removed. The states and their ids are declared with the records of
``__transaction_state`` (:mod:`spate.protocol.internal_records.transaction_log`).
"""

from __future__ import annotations

from spate.protocol.internal_records.transaction_log import TxnState

__all__ = ["VALID_PREVIOUS_STATES", "IllegalTransitionError", "TxnState", "check_transition"]

S = TxnState

# For each state, the states it may be entered from.
VALID_PREVIOUS_STATES: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}


class IllegalTransitionError(Exception):
    """A state change the state machine does not allow; nothing is written."""


def check_transition(transactional_id: str, current: TxnState | None, target: TxnState) -> None:
    """Raise unless ``current → target`` is legal (``None``: the id is new and starts Empty)."""
    if current is None:
        if target is S.EMPTY:
            return
        raise IllegalTransitionError(f"transactional id {transactional_id!r} must start Empty, not {target.display_name}")
    if current not in VALID_PREVIOUS_STATES[target]:
        raise IllegalTransitionError(
            f"transactional id {transactional_id!r} cannot go from {current.display_name} to {target.display_name}"
        )

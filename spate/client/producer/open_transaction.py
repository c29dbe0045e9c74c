"""The identity of one producer's transaction, as its coordinator knows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """``(transactional id, producer id, producer epoch)``: what EndTxn needs to end the transaction.

    ``Producer.transaction_identity`` and ``Producer.prepare_handoff`` return
    one; ``transaction_completion.py`` ends the transaction from any process.
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int

    def __post_init__(self) -> None:
        if not self.transactional_id:
            raise ValueError("an open transaction needs a transactional id")
        if self.producer_id < 0 or self.producer_epoch < 0:
            raise ValueError(
                f"transactional id {self.transactional_id!r}: producer id {self.producer_id} and "
                f"epoch {self.producer_epoch} must not be negative"
            )

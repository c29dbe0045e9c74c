"""How big a fault run is: one environment variable chooses between the quick run and the full one.

``SPATE_FAULT_ROUNDS`` (default 3) is the number of faults each loop
injects: leaders killed, brokers bounced, coordinators killed under the
transactional copy. The scenarios that inject a single long fault (a
zombie leader, a partitioned leader, an expired session) repeat it once
per four rounds, at least once. The transactional copy moves 10,000
records in the quick run and 100,000 from 20 rounds on
(``SPATE_FAULT_COPY_RECORDS`` overrides it). The quick run is the one the
test suite runs; ``SPATE_FAULT_ROUNDS=20`` is the full one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ROUNDS_ENV = "SPATE_FAULT_ROUNDS"
COPY_RECORDS_ENV = "SPATE_FAULT_COPY_RECORDS"
SEED_ENV = "SPATE_TEST_SEED"
QUICK_ROUNDS = 3
FULL_ROUNDS = 20
QUICK_COPY_RECORDS = 10_000
FULL_COPY_RECORDS = 100_000
ROUNDS_PER_EPISODE = 4


@dataclass(frozen=True)
class FaultScale:
    rounds: int
    copy_records: int

    @property
    def episodes(self) -> int:
        """How many times a scenario built around one long fault repeats it."""
        return max(1, self.rounds // ROUNDS_PER_EPISODE)

    @property
    def full(self) -> bool:
        return self.rounds >= FULL_ROUNDS

    @classmethod
    def from_environment(cls) -> FaultScale:
        rounds = int(os.environ.get(ROUNDS_ENV, QUICK_ROUNDS))
        if rounds < 1:
            raise ValueError(f"{ROUNDS_ENV} must be at least 1, not {rounds}")
        default_records = FULL_COPY_RECORDS if rounds >= FULL_ROUNDS else QUICK_COPY_RECORDS
        return cls(rounds=rounds, copy_records=int(os.environ.get(COPY_RECORDS_ENV, default_records)))

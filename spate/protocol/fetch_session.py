"""A Fetch request's session fields (Kafka's ``FetchMetadata``): which session, at which epoch.

=================  ==============  ==================================================
``session_id``     ``epoch``       meaning
=================  ==============  ==================================================
0                  -1 (final)      a full fetch without a session (and before v7)
0                  0 (initial)     a full fetch that asks for a new session
id                 0 (initial)     close session ``id``, full fetch, open a new one
id                 -1 (final)      close session ``id``, full fetch, no new session
id                 n > 0           an incremental fetch in session ``id``
=================  ==============  ==================================================

Epochs count up from 1 after the full fetch that opened the session and wrap
from ``INT32_MAX`` back to 1. Pure values: used by the broker's session cache
and by any fetcher that opens sessions (``fetch_session_handler``: the broker's replica
fetchers and the client's consumer).
"""

from __future__ import annotations

from dataclasses import dataclass

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 0x7FFFFFFF


def next_epoch(epoch: int) -> int:
    """The epoch that follows ``epoch`` (the final epoch stays final)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


@dataclass(frozen=True, slots=True)
class FetchMetadata:
    session_id: int = INVALID_SESSION_ID
    epoch: int = FINAL_EPOCH

    @property
    def is_full(self) -> bool:
        """A full fetch names every partition; an incremental one only what changed."""
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)

    def next_close_existing(self) -> FetchMetadata:
        """Close this session and open a new one with a full fetch."""
        return FetchMetadata(self.session_id, INITIAL_EPOCH)

    def next_incremental(self) -> FetchMetadata:
        return FetchMetadata(self.session_id, next_epoch(self.epoch))

    @staticmethod
    def new_incremental(session_id: int) -> FetchMetadata:
        """The first incremental fetch of a session the broker just opened."""
        return FetchMetadata(session_id, next_epoch(INITIAL_EPOCH))


# A full fetch asking for a new session.
INITIAL = FetchMetadata(INVALID_SESSION_ID, INITIAL_EPOCH)
# A full fetch without a session.
LEGACY = FetchMetadata(INVALID_SESSION_ID, FINAL_EPOCH)

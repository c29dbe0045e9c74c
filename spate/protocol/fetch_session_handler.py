"""A fetcher's side of a fetch session with one broker (Kafka's ``FetchSessionHandler``, KIP-227).

The first Fetch names every partition at epoch 0; the broker's answer opens a
session (or says session 0: no room, keep sending full fetches). Afterwards
each Fetch carries the session id and the next epoch, and names only the
partitions whose position changed (fetch offset, leader epoch, log start)
or that joined, plus the partitions that left as forgotten; the broker
answers only partitions with news, so a fetcher of many quiet partitions
sends and receives almost nothing.

Any failure starts over with a full fetch: a session the broker no longer
knows (FETCH_SESSION_ID_NOT_FOUND) opens a new one; any other session error,
a lost connection, or an answer naming partitions outside the session closes
the old session with the next full fetch.

Sans-IO and generic over the partition key and the position, so the broker's
replica fetchers and the client's consumer share it. Not thread-safe: one
fetcher, one request in flight per session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Hashable, Iterable, Mapping, TypeVar

from spate.protocol import ErrorCode
from spate.protocol.fetch_session import INITIAL, INVALID_SESSION_ID, FetchMetadata

P = TypeVar("P", bound=Hashable)
Position = TypeVar("Position")


@dataclass(frozen=True, slots=True)
class FetchRequestData(Generic[P, Position]):
    """What the next Fetch sends: its session fields, the partitions to name, the partitions to forget."""

    metadata: FetchMetadata
    to_send: dict[P, Position]
    to_forget: list[P]


@dataclass
class FetchSessionHandler(Generic[P, Position]):
    next_metadata: FetchMetadata = INITIAL
    # The partitions the leader's session holds (as last sent), in order.
    session_partitions: dict[P, Position] = field(default_factory=dict)

    def build(self, positions: Mapping[P, Position]) -> FetchRequestData[P, Position]:
        """The next request for ``positions`` (every partition wanted now)."""
        previous, self.session_partitions = self.session_partitions, dict(positions)
        if self.next_metadata.is_full:
            return FetchRequestData(self.next_metadata, dict(positions), [])
        to_send = {tp: position for tp, position in positions.items() if previous.get(tp) != position}
        to_forget = [tp for tp in previous if tp not in positions]
        return FetchRequestData(self.next_metadata, to_send, to_forget)

    def handle_response(self, error: ErrorCode, session_id: int, answered: Iterable[P]) -> bool:
        """Take the leader's answer; False when it is not to be used (the next request is a full one)."""
        if error is not ErrorCode.NONE:
            self.next_metadata = (INITIAL if error is ErrorCode.FETCH_SESSION_ID_NOT_FOUND
                                  else self.next_metadata.next_close_existing())
            return False
        if any(tp not in self.session_partitions for tp in answered):
            self.next_metadata = self.next_metadata.next_close_existing()
            return False
        if session_id == INVALID_SESSION_ID:
            self.next_metadata = INITIAL
        elif self.next_metadata.is_full:
            self.next_metadata = FetchMetadata.new_incremental(session_id)
        else:
            self.next_metadata = self.next_metadata.next_incremental()
        return True

    def handle_error(self) -> None:
        """The request failed on the way (connection, timeout): close the session with the next full fetch."""
        self.next_metadata = self.next_metadata.next_close_existing()

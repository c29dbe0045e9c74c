"""The bounded map from a record key to the offset of its latest record.

Kafka's ``SkimpyOffsetMap`` sizes itself from ``log.cleaner.dedupe.buffer.size``:
24 bytes a slot (a 16-byte key hash and an 8-byte offset), filled to at most
90% (``log.cleaner.io.buffer.load.factor``). This map keeps the same number
of entries for the same buffer, so a range with more keys than that is
planned in several passes, as in Kafka. It keys by the key bytes themselves,
which makes it exact (no hash collisions), at the cost of a Python dict's
memory per entry.

Not thread-safe: one cleaner thread fills and reads it.
"""

from __future__ import annotations

from typing import Iterator, Mapping

BYTES_PER_ENTRY = 24
LOAD_FACTOR = 0.9


class OffsetMap:
    """key -> latest offset, holding at most ``capacity`` keys."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an offset map needs room for at least one key, not {capacity}")
        self.capacity = capacity
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    @classmethod
    def for_buffer(cls, buffer_bytes: int, load_factor: float = LOAD_FACTOR) -> OffsetMap:
        """A map with as many entries as Kafka's map fits in ``buffer_bytes``."""
        return cls(max(1, int(buffer_bytes // BYTES_PER_ENTRY * load_factor)))

    @classmethod
    def of(cls, offsets: Mapping[bytes, int]) -> OffsetMap:
        """A map holding exactly ``offsets`` (a plan made elsewhere)."""
        offset_map = cls(max(1, len(offsets)))
        for key, offset in offsets.items():
            offset_map.put(key, offset)
        return offset_map

    def __len__(self) -> int:
        return len(self._offsets)

    def __contains__(self, key: object) -> bool:
        return key in self._offsets

    def items(self) -> Iterator[tuple[bytes, int]]:
        return iter(self._offsets.items())

    @property
    def is_full(self) -> bool:
        return len(self._offsets) >= self.capacity

    def put(self, key: bytes, offset: int) -> int | None:
        """Record ``offset`` as the latest of ``key``; return the offset it replaced (None: a new key).

        Raises ``OverflowError`` for a new key when the map is full.
        """
        previous = self._offsets.get(key)
        if previous is None and len(self._offsets) >= self.capacity:
            raise OverflowError(f"the offset map is full ({self.capacity} keys)")
        self._offsets[key] = offset
        if offset > self.latest_offset:
            self.latest_offset = offset
        return previous

    def put_latest(self, latest: dict[bytes, int]) -> bool:
        """Record a segment's keys at once (``latest``: each key's latest offset there, all later than the
        map's); False, and the map unchanged, when its new keys do not fit."""
        offsets = self._offsets
        new_keys = len(latest) - sum(1 for key in latest if key in offsets)
        if len(offsets) + new_keys > self.capacity:
            return False
        offsets.update(latest)
        if latest:
            self.latest_offset = max(self.latest_offset, max(latest.values()))
        return True

    def latest_of(self, keys: list[bytes | None]) -> list[int]:
        """``get`` of each key (-1 for None), for a batch's records at once."""
        if type(self).get is OffsetMap.get:
            get = self._offsets.get
            return [get(key, -1) for key in keys]  # type: ignore[arg-type]
        return [-1 if key is None else self.get(key) for key in keys]

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, or -1 when the map does not hold it."""
        return self._offsets.get(key, -1)

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1

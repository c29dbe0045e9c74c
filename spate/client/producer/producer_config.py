"""The producer's settings: Kafka's producer properties, their defaults and the rules between them."""

from __future__ import annotations

from dataclasses import dataclass

from spate.client.config import ClientConfig, parse_acks, parse_compression
from spate.records.compression import Compression

MAX_IN_FLIGHT_FOR_IDEMPOTENCE = 5


@dataclass(frozen=True, slots=True)
class ProducerConfig(ClientConfig):
    """Every setting ``Producer(...)`` takes by keyword, with Kafka's names (dots as underscores) and defaults.

    ``acks`` (0, 1, -1 or ``"all"``) is kept as a number and
    ``compression_type`` (``"none"``, ``"gzip"``, ``"snappy"``, ``"lz4"``,
    ``"zstd"`` or None) as a :class:`Compression`. ``enable_idempotence``:
    None (the default) turns idempotence on unless acks, retries or max in
    flight forbid it; True insists and refuses a conflict. ``max_block_ms``
    bounds how long ``send`` waits for metadata or buffer memory, and is the
    default timeout of the transaction calls. ``transactional_id`` makes the
    producer transactional (then idempotence is required, and acks must be
    all); ``transaction_timeout_ms`` is how long the coordinator lets a
    transaction stay open before aborting it.
    """

    client_id: str = "spate-producer"
    acks: int | str = -1
    compression_type: str | Compression | None = "none"
    batch_size: int = 16_384
    linger_ms: float = 5
    enable_idempotence: bool | None = None
    max_in_flight_requests_per_connection: int = 5
    delivery_timeout_ms: int = 120_000
    retries: int = 2_147_483_647
    max_request_size: int = 1_048_576
    buffer_memory: int = 33_554_432
    max_block_ms: int = 60_000
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60_000

    def __post_init__(self) -> None:
        # The order of the checks decides which error a set of bad values gets; it is the order of old.
        object.__setattr__(self, "acks", parse_acks(self.acks))
        if self.transactional_id is not None:
            if not self.transactional_id:
                raise ValueError("transactional_id must not be empty")
            if self.enable_idempotence is False:
                raise ValueError("a transactional producer is idempotent: enable_idempotence cannot be False")
        object.__setattr__(self, "compression_type", parse_compression(self.compression_type))
        if self.max_in_flight_requests_per_connection < 1:
            raise ValueError("max_in_flight_requests_per_connection must be at least 1")
        if self.retries < 0:
            raise ValueError(f"retries must not be negative, not {self.retries}")
        if self.delivery_timeout_ms < self.linger_ms + self.request_timeout_ms:
            raise ValueError("delivery_timeout_ms must be at least linger_ms + request_timeout_ms")
        conflicts = self._idempotence_conflicts()
        if (self.enable_idempotence or self.transactional_id is not None) and conflicts:
            raise ValueError("enable_idempotence=True needs: " + "; ".join(conflicts))
        ClientConfig.__post_init__(self)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive, not {self.batch_size}")
        if self.linger_ms < 0:
            raise ValueError(f"linger must not be negative, not {self.linger}")
        # Only an idempotent producer sends it (in InitProducerId).
        if self.idempotent and self.transaction_timeout_ms <= 0:
            raise ValueError(f"transaction_timeout_ms must be positive, not {self.transaction_timeout_ms}")

    def _idempotence_conflicts(self) -> list[str]:
        return [
            reason
            for reason, bad in (
                ("acks must be 'all'", self.acks != -1),
                ("retries must be above 0", self.retries == 0),
                (f"max_in_flight_requests_per_connection must be at most {MAX_IN_FLIGHT_FOR_IDEMPOTENCE}",
                 self.max_in_flight_requests_per_connection > MAX_IN_FLIGHT_FOR_IDEMPOTENCE),
            )
            if bad
        ]

    @property
    def idempotent(self) -> bool:
        """Whether the producer numbers its batches (see ``enable_idempotence``)."""
        if self.transactional_id is not None:
            return True
        return not self._idempotence_conflicts() if self.enable_idempotence is None else self.enable_idempotence

    @property
    def compression(self) -> Compression:
        return self.compression_type  # type: ignore[return-value]  # parsed in __post_init__

    @property
    def linger(self) -> float:
        return self.linger_ms / 1000

    @property
    def max_block(self) -> float:
        return self.max_block_ms / 1000

    @property
    def delivery_timeout(self) -> float:
        return self.delivery_timeout_ms / 1000

"""Settings every client shares, and parsing of the user-facing option values.

Names follow the Kafka client properties (``request.timeout.ms`` becomes
``request_timeout_ms``) and so do the defaults, so Kafka users know them.
Each client has a config object built on :class:`ClientConfig`
(``ProducerConfig``, ``ConsumerConfig``, ``AdminConfig``); its constructor
takes the settings as keyword arguments and hands them over whole
(:meth:`ClientConfig.from_options`), so each setting is declared, defaulted
and checked in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Self, Sequence

from spate.client.net.security import check_security_settings
from spate.records.compression import Compression

DEFAULT_CLIENT_ID = "spate-client"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Connection, timeout and retry settings of one client.

    * ``connect_timeout_ms``: TCP connect plus the ApiVersions handshake.
    * ``request_timeout_ms``: how long one request may wait for its answer;
      the connection is closed when it passes, failing every request on it.
    * ``retry_backoff_ms`` .. ``retry_backoff_max_ms``: exponential backoff
      (with 20% jitter) between retries and between reconnect attempts.
    * ``metadata_max_age_ms``: metadata is refreshed at least this often.
    * ``max_response_size``: a bigger response frame closes the connection.
    * ``security_protocol``, ``ssl_*``, ``sasl_*``: TLS and SASL, see
      :mod:`spate.client.net.security`.
    """

    client_id: str = DEFAULT_CLIENT_ID
    connect_timeout_ms: int = 10_000
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1_000
    metadata_max_age_ms: int = 300_000
    max_response_size: int = 0x7FFFFFFF
    security_protocol: str = "PLAINTEXT"
    ssl_truststore_location: str | None = None
    ssl_keystore_location: str | None = None
    ssl_key_password: str | None = None
    ssl_endpoint_identification_algorithm: str = "https"
    sasl_mechanism: str = "PLAIN"
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # Subclasses call this explicitly: zero-argument super() does not work in slotted dataclasses.
        for name in ("connect_timeout_ms", "request_timeout_ms", "metadata_max_age_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")
        if self.retry_backoff_ms < 0 or self.retry_backoff_max_ms < self.retry_backoff_ms:
            raise ValueError("need 0 <= retry_backoff_ms <= retry_backoff_max_ms")
        check_security_settings(self)

    @classmethod
    def from_options(cls, owner: str, options: Mapping[str, Any]) -> Self:
        """The config of a client whose constructor (``owner``, e.g. ``"Producer"``) got ``options``.

        An unknown name raises the TypeError Python raises for an unexpected
        keyword argument; bad values raise ValueError from the checks.
        """
        known = {f.name for f in fields(cls) if f.init}
        for name in options:
            if name not in known:
                raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {name!r}")
        return cls(**options)


def timeout_seconds(timeout_ms: float | None, default: float) -> float:
    """A call's ``timeout_ms`` in seconds (negative counts as 0); None means ``default`` seconds."""
    return default if timeout_ms is None else max(0.0, timeout_ms) / 1000


def parse_bootstrap_servers(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"host:port,host:port"`` (or a list of ``host:port``) as ``(host, port)`` pairs.

    IPv6 literals go in brackets: ``[::1]:9092``.
    """
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    addresses = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        if "://" in item:  # tolerate listener-style "PLAINTEXT://host:port"
            item = item.split("://", 1)[1]
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bootstrap server {item!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    if not addresses:
        raise ValueError("bootstrap_servers names no broker")
    return addresses


def parse_acks(acks: int | str) -> int:
    """Kafka's ``acks``: 0, 1, or -1 (also spelled ``"all"``)."""
    if isinstance(acks, str):
        text = acks.strip().lower()
        if text == "all":
            return -1
        try:
            acks = int(text)
        except ValueError:
            raise ValueError(f"acks must be 0, 1, -1 or 'all', not {acks!r}") from None
    if acks not in (0, 1, -1):
        raise ValueError(f"acks must be 0, 1, -1 or 'all', not {acks!r}")
    return acks


def parse_compression(name: str | Compression | None) -> Compression:
    """``"none" | "gzip" | "snappy" | "lz4" | "zstd"`` (None means none)."""
    if name is None:
        return Compression.NONE
    if isinstance(name, Compression):
        return name
    try:
        return Compression[name.strip().upper()]
    except KeyError:
        raise ValueError(f"compression_type must be none, gzip, snappy, lz4 or zstd, not {name!r}") from None



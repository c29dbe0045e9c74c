"""One advertised listener of a broker: ``NAME://host:port`` and its security protocol (Kafka's ``EndPoint``).

A broker advertises one endpoint per listener it registers; clients are
told the endpoints of the listener their request arrived on, brokers reach
each other through ``inter.broker.listener.name``. The security protocol's
wire id (UpdateMetadata carries it as a number) is Kafka's
``SecurityProtocol`` id.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

PLAINTEXT = "PLAINTEXT"
SECURITY_PROTOCOL_IDS = MappingProxyType({"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3})
SECURITY_PROTOCOL_NAMES = MappingProxyType({number: name for name, number in SECURITY_PROTOCOL_IDS.items()})


@dataclass(frozen=True)
class EndPoint:
    """One advertised listener: ``NAME://host:port`` and the security protocol it speaks."""

    listener_name: str
    host: str
    port: int
    security_protocol: str = PLAINTEXT

    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"


def find_endpoint(endpoints: tuple[EndPoint, ...], listener_name: str) -> EndPoint | None:
    """The endpoint of ``listener_name`` (names compare upper-cased, as Kafka normalises them), or None."""
    wanted = listener_name.upper()
    return next((e for e in endpoints if e.listener_name.upper() == wanted), None)

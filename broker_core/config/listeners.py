"""Listener endpoints: ``NAME://host:port`` as in Kafka's ``listeners``.

The name is a listener name (upper-cased, as Kafka normalises it) that the
``listener.security.protocol.map`` resolves to a security protocol. An empty
host binds every interface; IPv6 hosts are written in brackets
(``PLAINTEXT://[::1]:9092``). Port 0 asks the OS for a free port.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from broker_core.config.definitions import ConfigValue, InvalidValue

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")

_LISTENER = re.compile(
    r"(?P<name>[A-Za-z0-9_]+)://"
    r"(?:\[(?P<ipv6>[0-9A-Fa-f:.%]+)\]|(?P<host>[0-9A-Za-z.%_-]*))"
    r":(?P<port>[0-9]+)"
)
_LISTENER_NAME = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class Listener:
    """One endpoint the broker binds or advertises."""

    name: str
    security_protocol: str
    host: str
    port: int

    @property
    def binds_all_interfaces(self) -> bool:
        return self.host in WILDCARD_HOSTS

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


@dataclass(frozen=True)
class Endpoint:
    """A listener before its security protocol is known."""

    name: str
    host: str
    port: int


def parse_endpoint(text: str) -> Endpoint:
    match = _LISTENER.fullmatch(text.strip())
    if match is None:
        raise InvalidValue(f"listener {text!r} is not NAME://host:port")
    port = int(match["port"])
    if port > 65535:
        raise InvalidValue(f"listener {text!r} has port {port}, above 65535")
    host = match["ipv6"] if match["ipv6"] is not None else match["host"]
    return Endpoint(name=match["name"].upper(), host=host, port=port)


def check_listener_list(value: ConfigValue) -> None:
    """Validator for ``listeners`` / ``advertised.listeners``: each entry parses, names are unique."""
    if not isinstance(value, tuple):
        return
    endpoints = [parse_endpoint(entry) for entry in value]
    names = [endpoint.name for endpoint in endpoints]
    for name in names:
        if names.count(name) > 1:
            raise InvalidValue(f"listener name {name} appears more than once")


def parse_protocol_map(value: ConfigValue) -> dict[str, str]:
    """``NAME:PROTOCOL,...`` to a dict; also the validator of ``listener.security.protocol.map``."""
    result: dict[str, str] = {}
    if not isinstance(value, tuple):
        return result
    for entry in value:
        name, sep, protocol = entry.partition(":")
        name, protocol = name.strip().upper(), protocol.strip().upper()
        if not sep or not _LISTENER_NAME.fullmatch(name):
            raise InvalidValue(f"entry {entry!r} is not LISTENER_NAME:SECURITY_PROTOCOL")
        if protocol not in SECURITY_PROTOCOLS:
            raise InvalidValue(f"entry {entry!r}: security protocol must be one of {', '.join(SECURITY_PROTOCOLS)}")
        if name in result:
            raise InvalidValue(f"listener name {name} is mapped more than once")
        result[name] = protocol
    return result


def check_protocol_map(value: ConfigValue) -> None:
    parse_protocol_map(value)


def resolve_listeners(entries: tuple[str, ...], protocol_map: Mapping[str, str]) -> tuple[Listener, ...]:
    """Attach security protocols; a name missing from the map is an error."""
    listeners: list[Listener] = []
    for entry in entries:
        endpoint = parse_endpoint(entry)
        protocol = protocol_map.get(endpoint.name)
        if protocol is None:
            raise InvalidValue(
                f"listener name {endpoint.name} has no security protocol in listener.security.protocol.map"
            )
        listeners.append(Listener(endpoint.name, protocol, endpoint.host, endpoint.port))
    return tuple(listeners)

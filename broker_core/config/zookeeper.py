"""``zookeeper.connect``: Kafka's ``host:port[,host:port...][/chroot]``.

The hosts are ZooKeeper servers of one ensemble; a client tries them in turn.
A host without a port means ZooKeeper's default port 2181, as the ZooKeeper
client itself reads the string; an IPv6 host is written in brackets
(``[::1]:2181``). The optional chroot after the first ``/`` roots every path
the broker uses under that znode, so several clusters can share an ensemble;
it follows ZooKeeper's path rules (no empty, ``.`` or ``..`` segment, no
trailing ``/``), and ``/`` alone means no chroot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from broker_core.config.definitions import ConfigValue, InvalidValue

DEFAULT_ZOOKEEPER_PORT = 2181
CONNECT_FORMAT = "host:port[,host:port...][/chroot]"

_HOST_PORT = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.%]+)\]|(?P<host>[^\s:/,\[\]]+))(?::(?P<port>[^:]*))?")


@dataclass(frozen=True)
class ZkServerAddress:
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class ZkConnectString:
    """A parsed ``zookeeper.connect``: the servers and the chroot (``None`` for the root)."""

    servers: tuple[ZkServerAddress, ...]
    chroot: str | None = None

    @property
    def hosts(self) -> str:
        """The servers as a ZooKeeper client takes them, without the chroot."""
        return ",".join(str(server) for server in self.servers)

    def __str__(self) -> str:
        return self.hosts + (self.chroot or "")


def parse_zookeeper_connect(text: str) -> ZkConnectString:
    """Parse ``host:port[,host:port...][/chroot]``; :class:`InvalidValue` says what is wrong."""
    text = text.strip()
    if not text:
        raise InvalidValue("is empty")
    hosts_text, slash, chroot_text = text.partition("/")
    chroot = _parse_chroot("/" + chroot_text) if slash else None
    if not hosts_text:
        raise InvalidValue("names no ZooKeeper server before the chroot")
    servers = tuple(_parse_server(entry) for entry in hosts_text.split(","))
    return ZkConnectString(servers=servers, chroot=chroot)


def check_zookeeper_connect(value: ConfigValue) -> None:
    """Validator of ``zookeeper.connect``; empty selects the embedded store and is fine."""
    if isinstance(value, str) and value.strip():
        parse_zookeeper_connect(value)


def _parse_server(entry: str) -> ZkServerAddress:
    entry = entry.strip()
    if not entry:
        raise InvalidValue("has an empty server entry")
    match = _HOST_PORT.fullmatch(entry)
    if match is None:
        raise InvalidValue(f"server {entry!r} is not host:port")
    host = match.group("ipv6") or match.group("host")
    port_text = match.group("port")
    if port_text is None:
        return ZkServerAddress(host, DEFAULT_ZOOKEEPER_PORT)
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise InvalidValue(f"server {entry!r} has port {port_text!r}; a port is between 1 and 65535")
    return ZkServerAddress(host, int(port_text))


def _parse_chroot(path: str) -> str | None:
    if path == "/":
        return None
    if path.endswith("/"):
        raise InvalidValue(f"chroot {path!r} must not end with '/'")
    for segment in path[1:].split("/"):
        if segment in ("", ".", ".."):
            raise InvalidValue(f"chroot {path!r} has an empty, '.' or '..' segment")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in path):
        raise InvalidValue(f"chroot {path!r} contains a control character")
    return path

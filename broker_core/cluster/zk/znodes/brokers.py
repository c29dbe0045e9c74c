"""Broker registrations: ``/brokers/ids/<id>`` (ephemeral) and ``/brokers/seqid``.

A live broker holds an ephemeral znode named by its id; ZooKeeper deletes it
when the broker's session ends, which is how the cluster learns that a broker
is gone. The data is Kafka's version 5 registration::

    {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},
     "endpoints":["PLAINTEXT://host:9092"],"jmx_port":-1,"port":9092,"host":"host",
     "version":5,"timestamp":"1700000000000"}

``host`` and ``port`` repeat the first PLAINTEXT endpoint for old clients
(``null`` and -1 when there is none); ``rack`` is present only when set.
Decoding also reads the older versions 1 to 4 (version 1 has only host and port).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from broker_core.cluster.endpoint import PLAINTEXT, EndPoint
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.zk.znodes.fields import INT64_MAX, JsonFields, encode_json

BROKER_REGISTRATION_VERSION = 5
# What Kafka assumes when a registration names no protocol map: each protocol is its own listener name.
_DEFAULT_PROTOCOL_MAP = {name: name for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
_ENDPOINT = re.compile(r"(?P<name>[A-Za-z0-9_]+)://(?:\[(?P<ipv6>[^\]]+)\]|(?P<host>[^:]*)):(?P<port>[0-9]+)")


@dataclass(frozen=True)
class BrokerInfo:
    """Everything a broker registration znode holds."""

    broker_id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    timestamp_ms: int = 0
    jmx_port: int = -1
    features: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    version: int = BROKER_REGISTRATION_VERSION

    @classmethod
    def from_registration(cls, registration: BrokerRegistration, timestamp_ms: int) -> BrokerInfo:
        """The broker as :class:`BrokerRegistration` describes it, with every endpoint it advertises."""
        return cls(registration.broker_id, registration.endpoints, registration.rack, timestamp_ms)

    def registration(self) -> BrokerRegistration:
        """The broker as the metadata store reports it: every endpoint, reached at its first PLAINTEXT
        endpoint, else its first."""
        endpoint = self.plaintext_endpoint() or (self.endpoints[0] if self.endpoints else None)
        if endpoint is None:
            return BrokerRegistration(self.broker_id, "", -1, self.rack)
        return BrokerRegistration(self.broker_id, endpoint.host, endpoint.port, self.rack, self.endpoints)

    def plaintext_endpoint(self) -> EndPoint | None:
        return next((e for e in self.endpoints if e.security_protocol == PLAINTEXT), None)


class BrokerIdsZNode:
    """``/brokers/ids``: the parent of the registrations; its children are the live broker ids."""

    @staticmethod
    def path() -> str:
        return "/brokers/ids"


class BrokerIdZNode:
    """``/brokers/ids/<id>``: one live broker (ephemeral)."""

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode.path()}/{broker_id}"

    @staticmethod
    def encode(info: BrokerInfo) -> bytes:
        plaintext = info.plaintext_endpoint()
        document: dict[str, Any] = {
            "features": {name: dict(versions) for name, versions in info.features.items()},
            "listener_security_protocol_map": {e.listener_name: e.security_protocol for e in info.endpoints},
            "endpoints": [e.connection_string() for e in info.endpoints],
            "jmx_port": info.jmx_port,
            "port": plaintext.port if plaintext else -1,
            "host": plaintext.host if plaintext else None,
            "version": info.version,
            "timestamp": str(info.timestamp_ms),
        }
        if info.rack is not None:
            document["rack"] = info.rack
        return encode_json(document)

    @staticmethod
    def decode(broker_id: int, data: bytes | None) -> BrokerInfo:
        fields = JsonFields.parse(BrokerIdZNode.path(broker_id), data)
        version = fields.version()
        if version == 1:
            endpoints: tuple[EndPoint, ...] = (EndPoint(PLAINTEXT, fields.text("host"), _port(fields, "port")),)
        else:
            protocols = fields.text_map("listener_security_protocol_map") if fields.has(
                "listener_security_protocol_map"
            ) else _DEFAULT_PROTOCOL_MAP
            endpoints = tuple(_endpoint(fields, text, protocols) for text in _texts(fields, "endpoints"))
        features: dict[str, dict[str, int]] = {}
        if fields.has("features"):
            feature_fields = fields.child("features")
            for name in feature_fields.keys():
                ranges = feature_fields.child(name)
                features[name] = {label: ranges.integer(label) for label in ranges.keys()}
        return BrokerInfo(
            broker_id=broker_id,
            endpoints=endpoints,
            rack=fields.optional_text("rack"),
            timestamp_ms=fields.long_text("timestamp", minimum=0, maximum=INT64_MAX) if fields.has("timestamp") else 0,
            jmx_port=fields.integer("jmx_port") if fields.has("jmx_port") else -1,
            features=features,
            version=version,
        )


class BrokerSequenceIdZNode:
    """``/brokers/seqid``: no data; its data version is the counter behind generated broker ids."""

    @staticmethod
    def path() -> str:
        return "/brokers/seqid"

    @staticmethod
    def encode() -> bytes:
        return b""


def _texts(fields: JsonFields, key: str) -> list[str]:
    value = fields.raw(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fields.fail(key, f"is {value!r}, not a list of strings")
    return value


def _port(fields: JsonFields, key: str) -> int:
    return fields.integer(key, minimum=-1, maximum=65535)


def _endpoint(fields: JsonFields, text: str, protocols: Mapping[str, str]) -> EndPoint:
    match = _ENDPOINT.fullmatch(text)
    if match is None:
        raise fields.fail("endpoints", f"has {text!r}, not NAME://host:port")
    name = match.group("name")
    protocol = protocols.get(name)
    if protocol is None:
        raise fields.fail("listener_security_protocol_map", f"has no security protocol for listener {name}")
    port = int(match.group("port"))
    if port > 65535:
        raise fields.fail("endpoints", f"has {text!r}, whose port is above 65535")
    return EndPoint(name, match.group("ipv6") or match.group("host") or "", port, protocol)

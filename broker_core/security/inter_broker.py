"""This broker's own connections to other brokers: the inter-broker listener's security protocol.

Replica fetchers, the controller's channel, the transaction marker channel
and controlled shutdown all connect through one :class:`InterBrokerSecurity`
built from the configuration: TLS (trusting ``ssl.truststore.*``, presenting
the key store for ``ssl.client.auth``, checking host names unless
``ssl.endpoint.identification.algorithm`` is empty) on SSL and SASL_SSL, and
on SASL listeners a SaslHandshake v1 + SaslAuthenticate exchange with
``sasl.mechanism.inter.broker.protocol`` and the broker's own credentials,
the ``username``/``password`` of
``listener.name.<inter-broker listener>.<mechanism>.sasl.jaas.config``.
A refused login raises :class:`InterBrokerAuthenticationError` (an
``OSError``, so callers treat it as an unreachable broker and retry).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from dataclasses import dataclass, field
from typing import Any

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.security_properties import jaas_config, listener_key, listener_value
from broker_core.security.sasl.jaas import JaasConfigError, parse_jaas_config
from broker_core.security.tls import client_context
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import decode_response, encode_request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spate.protocol.messages.sasl_handshake import SaslHandshakeRequest
from spate.protocol.sasl import SaslClient, SaslClientError

SASL_VERSION = 1
# The exchange's correlation ids: below anything a connection's own codec uses afterwards.
_CORRELATION_BASE = -1000


class InterBrokerAuthenticationError(OSError):
    """Another broker refused this broker's credentials."""


@dataclass(frozen=True)
class InterBrokerSecurity:
    client_id: str = field(default="broker", compare=False)
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str = ""
    password: str = ""

    @classmethod
    def from_config(cls, config: BrokerConfig) -> InterBrokerSecurity:
        name = config.inter_broker_listener_name
        protocol = next(listener.security_protocol for listener in config.listeners if listener.name == name)
        values = config.values
        context = client_context(values, name) if protocol in ("SSL", "SASL_SSL") else None
        if protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
            return cls(f"broker-{config.node_id}", context)
        mechanism = str(listener_value(values, name, "sasl.mechanism.inter.broker.protocol"))
        key = listener_key(name, f"{mechanism.lower()}.sasl.jaas.config")
        text = jaas_config(values, name, mechanism)
        try:
            entry = parse_jaas_config(text) if text else None
        except JaasConfigError as exc:
            raise ConfigError(str(exc), key=key) from None
        if entry is None or entry.username is None or entry.password is None:
            raise ConfigError(f"the inter-broker listener {name} uses SASL {mechanism}: its JAAS entry needs this "
                              "broker's username and password", key=key)
        return cls(f"broker-{config.node_id}", context, mechanism, entry.username, entry.password)

    async def open_connection(self, host: str, port: int, **kwargs: Any,
                              ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """``asyncio.open_connection`` to another broker, secured and authenticated."""
        if self.ssl_context is not None:
            kwargs.update(ssl=self.ssl_context, server_hostname=host)
        reader, writer = await asyncio.open_connection(host, port, **kwargs)
        if self.mechanism is not None:
            try:
                await self._authenticate(_AsyncFrames(reader, writer))
            except BaseException:
                writer.close()
                raise
        return reader, writer

    def connect(self, host: str, port: int, timeout: float) -> socket.socket:
        """A blocking socket to another broker, secured and authenticated."""
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            if self.ssl_context is not None:
                sock = self.ssl_context.wrap_socket(sock, server_hostname=host)
            if self.mechanism is not None:
                _run_blocking(self._authenticate(_BlockingFrames(sock)))
        except BaseException:
            sock.close()
            raise
        return sock

    async def _authenticate(self, frames: Any) -> None:
        client = SaslClient(self.mechanism or "", self.username, self.password)
        handshake = await frames.call(ApiKey.SASL_HANDSHAKE, SaslHandshakeRequest(mechanism=client.mechanism),
                                      self.client_id)
        if handshake.error_code != ErrorCode.NONE:
            raise InterBrokerAuthenticationError(f"SASL mechanism {client.mechanism} is not enabled there "
                                                 f"(it offers {', '.join(handshake.mechanisms)})")
        message: bytes | None = client.first()
        while message is not None:
            response = await frames.call(ApiKey.SASL_AUTHENTICATE, SaslAuthenticateRequest(auth_bytes=message),
                                         self.client_id)
            if response.error_code != ErrorCode.NONE:
                raise InterBrokerAuthenticationError(response.error_message or ErrorCode.of(response.error_code).name)
            try:
                message = client.respond(response.auth_bytes)
            except SaslClientError as exc:
                raise InterBrokerAuthenticationError(str(exc)) from None


class _AsyncFrames:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer, self._correlation = reader, writer, _CORRELATION_BASE

    async def call(self, api_key: ApiKey, body: Any, client_id: str) -> Any:
        self._correlation += 1
        self._writer.write(encode_request(api_key, SASL_VERSION, self._correlation, client_id, body))
        await self._writer.drain()
        size = struct.unpack(">i", await self._reader.readexactly(4))[0]
        return decode_response(api_key, SASL_VERSION, await self._reader.readexactly(size)).body


class _BlockingFrames:
    def __init__(self, sock: socket.socket) -> None:
        self._sock, self._correlation = sock, _CORRELATION_BASE

    async def call(self, api_key: ApiKey, body: Any, client_id: str) -> Any:
        self._correlation += 1
        self._sock.sendall(encode_request(api_key, SASL_VERSION, self._correlation, client_id, body))
        size = struct.unpack(">i", self._exactly(4))[0]
        return decode_response(api_key, SASL_VERSION, self._exactly(size)).body

    def _exactly(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self._sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection during SASL authentication")
            data += chunk
        return bytes(data)


def _run_blocking(coroutine: Any) -> None:
    """Drive a coroutine whose awaits never suspend (blocking frames) to its end."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()
    raise RuntimeError("a blocking SASL exchange suspended")


PLAINTEXT = InterBrokerSecurity()

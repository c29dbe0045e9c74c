"""Each connection knows who it is: the mapped TLS subject, the SASL user, or User:ANONYMOUS; failed logins
are counted.

The broker runs in this test's event loop, so the test reads the principal
off the broker's live connections, where an authorizer will find it.
"""

from __future__ import annotations

import asyncio
import ssl
import struct
from pathlib import Path

from broker_core.config.broker_config import BrokerConfig
from broker_core.server.broker import Broker
from spate.cli.certs import create_certificates
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import decode_response, encode_request
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spate.protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.support.ports import free_port

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'


async def call(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, api_key: ApiKey, version: int,
               body: object) -> object:
    writer.write(encode_request(api_key, version, 1, "principal-test", body))
    await writer.drain()
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    return decode_response(api_key, version, await reader.readexactly(size)).body


def test_principals_of_mtls_sasl_and_plaintext_connections(tmp_path: Path) -> None:
    certs = create_certificates(tmp_path / "certs", client_name="Alice.Smith")
    ports = {"PLAIN": free_port(), "MTLS": free_port(), "SASL": free_port()}
    config = BrokerConfig.from_properties({
        "listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "listener.security.protocol.map": "PLAIN:PLAINTEXT,MTLS:SSL,SASL:SASL_PLAINTEXT",
        "log.dirs": str(tmp_path / "logs"), "offsets.topic.num.partitions": "1",
        "ssl.keystore.location": str(certs.broker_keystore), "ssl.truststore.location": str(certs.ca),
        "ssl.client.auth": "required", "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),.*$/$1/L",
        "listener.name.sasl.plain.sasl.jaas.config": JAAS,
    })

    async def scenario() -> dict[str, str]:
        broker = Broker(config)
        await broker.start()
        try:
            client_tls = ssl.create_default_context(cafile=str(certs.ca))
            client_tls.load_cert_chain(str(certs.client_keystore))
            streams = {
                "PLAIN": await asyncio.open_connection("127.0.0.1", ports["PLAIN"]),
                "MTLS": await asyncio.open_connection("127.0.0.1", ports["MTLS"], ssl=client_tls,
                                                      server_hostname="127.0.0.1"),
                "SASL": await asyncio.open_connection("127.0.0.1", ports["SASL"]),
            }
            for name in ("PLAIN", "MTLS"):
                await call(*streams[name], ApiKey.API_VERSIONS, 2, ApiVersionsRequest())
            await call(*streams["SASL"], ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
            await call(*streams["SASL"], ApiKey.SASL_AUTHENTICATE, 1,
                       SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret"))
            principals = {c.listener_name: str(c.principal) for c in broker.open_connections}
            wrong = await asyncio.open_connection("127.0.0.1", ports["SASL"])
            await call(*wrong, ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
            await call(*wrong, ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(auth_bytes=b"\0alice\0nope"))
            principals["failed authentications"] = str(broker.failed_authentications)
            for _, writer in streams.values():
                writer.close()
            return principals
        finally:
            await broker.stop()

    assert asyncio.run(scenario()) == {"PLAIN": "User:ANONYMOUS", "MTLS": "User:alice.smith", "SASL": "User:alice",
                                       "failed authentications": "1"}

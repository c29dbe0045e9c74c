"""The socket server applies Kafka's socket settings to what it accepts."""

from __future__ import annotations

import asyncio
import socket

from broker_core.config.broker_config import BrokerConfig
from broker_core.server.socket_server import SocketServer


def accepted_buffers(tmp_path, **settings: str) -> tuple[int, int]:
    """(SO_SNDBUF, SO_RCVBUF) of a connection the server accepted under ``settings``."""
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path), **settings,
    })
    seen: asyncio.Future[tuple[int, int]]

    async def on_connection(listener: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result((sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
                         sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)))
        writer.close()

    async def run() -> tuple[int, int]:
        nonlocal seen
        seen = asyncio.get_running_loop().create_future()
        server = SocketServer(config, on_connection)
        await server.bind()
        await server.start_serving()
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", server.first_port)
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                writer.close()
        finally:
            server.close()

    return asyncio.run(run())


def test_socket_buffer_sizes_are_applied_to_accepted_connections(tmp_path) -> None:
    send, receive = accepted_buffers(tmp_path, **{
        "socket.send.buffer.bytes": "65536", "socket.receive.buffer.bytes": "32768",
    })
    # Linux doubles what is asked for, to leave room for its bookkeeping.
    assert send in (65536, 2 * 65536)
    assert receive in (32768, 2 * 32768)


def test_minus_one_leaves_the_kernels_defaults(tmp_path) -> None:
    with socket.socket() as plain:
        default_receive = plain.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    send, receive = accepted_buffers(tmp_path, **{
        "socket.send.buffer.bytes": "-1", "socket.receive.buffer.bytes": "-1",
    })
    assert send not in (65536, 2 * 65536, 102400, 2 * 102400)
    assert receive >= default_receive

"""A write sent straight to one broker, bypassing the client's metadata: how a test reaches a stale leader.

:meth:`StaleWrite.send` opens a connection to a broker's client listener and
sends one acks=all Produce of one record, without waiting. The broker may be
paused: the kernel completes the connection and buffers the request, which the
broker then reads before anything else once it resumes, while it still
believes in its old leadership. :meth:`StaleWrite.answer` reads the answer
(bounded). The record's value is unique, so a test can look for it in every
replica's log files afterwards (:func:`held_by`).
"""

from __future__ import annotations

import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from spate.protocol import ClientConnection
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.produce import ProduceRequest
from spate.records.builder import build_batch
from spate.records.record import Record

PRODUCE_VERSION = 7
ACKS_ALL = -1


@dataclass
class StaleWrite:
    topic: str
    partition: int
    value: bytes
    _socket: socket.socket
    _connection: ClientConnection

    @classmethod
    def send(cls, address: str, topic: str, partition: int, *, timeout_ms: int = 10_000) -> StaleWrite:
        value = f"stale-write-{uuid.uuid4().hex}".encode()
        Q = ProduceRequest
        batch = build_batch([Record(0, int(time.time() * 1000), None, value)])
        body = Q(acks=ACKS_ALL, timeout_ms=timeout_ms, topic_data=[
            Q.TopicProduceData(name=topic, partition_data=[Q.PartitionProduceData(index=partition, records=batch)])
        ])
        host, port = address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=5)
        connection = ClientConnection("stale-write")
        _, frame = connection.send_request(ApiKey.PRODUCE, PRODUCE_VERSION, body)
        sock.sendall(frame)
        return cls(topic, partition, value, sock, connection)

    def answer(self, timeout: float = 60.0) -> ErrorCode:
        """The error code the broker answered (NONE: it acknowledged the write)."""
        self._socket.settimeout(timeout)
        try:
            while (response := self._connection.next_response()) is None:
                data = self._socket.recv(1 << 16)
                if not data:
                    raise ConnectionError("the broker closed the connection before answering")
                self._connection.receive_data(data)
        finally:
            self._socket.close()
        found = response.body.responses[0].partition_responses[0]
        return ErrorCode(found.error_code)


def held_by(value: bytes, partition_dirs: dict[int, Path]) -> list[int]:
    """The brokers whose log segment files of the partition contain ``value`` (uncompressed)."""
    return sorted(broker_id for broker_id, directory in partition_dirs.items()
                  if directory.is_dir() and any(value in path.read_bytes() for path in directory.glob("*.log")))

"""WriteTxnMarkers to the brokers that lead a transaction's partitions (Kafka's TransactionMarkerChannelManager).

The transaction coordinator writes the markers of partitions led here
itself; for a partition led by another broker it queues a marker entry
(producer id and epoch, commit or abort, coordinator epoch, the partitions)
for that broker. Each destination has its own queue, drained by one asyncio
task on the broker's event loop: everything queued meanwhile goes out as one
WriteTxnMarkers v1 request, so a busy coordinator sends few, large requests,
and a slow or dead broker never delays the others. Nothing here blocks the
loop: connections are asyncio streams carrying the sans-IO
:class:`spate.protocol.ClientConnection`.

Every entry is answered exactly once, on the loop's thread, with an error
code per partition: the destination's own answer, or NETWORK_EXCEPTION
when the request could not be delivered or answered in time (the
connection is then dropped and the next request opens a new one). Retrying
is the caller's business: it looks the leader up again and queues anew.
A request holds at most one entry per producer id, since the answer is
matched to entries by producer id, as Kafka's is.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from broker_core.cancellation import raise_if_cancelled
from broker_core.coordinator.transaction.txn_markers import MarkerRequest
from broker_core.security.inter_broker import PLAINTEXT, InterBrokerSecurity
from spate.protocol import ApiKey, ClientConnection, ErrorCode, ProtocolError
from spate.protocol.messages.write_txn_markers import WriteTxnMarkersRequest
from spate.structs import TopicPartition, group_by_topic

logger = logging.getLogger(__name__)

Q = WriteTxnMarkersRequest
WRITE_TXN_MARKERS_VERSION = 1
MAX_MARKERS_PER_REQUEST = 500


class LeaderEndpoint(NamedTuple):
    """Where a partition's leader listens: what a leader lookup answers (a plain tuple will do)."""

    broker_id: int
    host: str
    port: int


# The current leader of a partition, or None while it has none (or its topic is unknown).
LeaderLookup = Callable[[TopicPartition], "LeaderEndpoint | tuple[int, str, int] | None"]
# One error code per partition of an entry.
MarkerAnswer = Callable[[dict[TopicPartition, ErrorCode]], None]


@dataclass(frozen=True, slots=True)
class _Entry:
    request: MarkerRequest
    partitions: tuple[TopicPartition, ...]
    on_answer: MarkerAnswer

    def answer(self, errors: dict[TopicPartition, ErrorCode]) -> None:
        try:
            self.on_answer(errors)
        except Exception:  # one bad callback must not stop the destination's queue
            logger.exception("handling the answer to markers for producer %d failed", self.request.producer_id)

    def fail(self, code: ErrorCode) -> None:
        self.answer({tp: code for tp in self.partitions})


class _Destination:
    """One broker's queue and the task that drains it over one connection."""

    def __init__(self, endpoint: LeaderEndpoint, *, client_id: str, timeout_s: float,
                 security: InterBrokerSecurity = PLAINTEXT) -> None:
        self._security = security
        self.endpoint = endpoint
        self._client_id = client_id
        self._timeout_s = timeout_s
        self._queue: list[_Entry] = []
        self._wakeup = asyncio.Event()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._codec: ClientConnection | None = None
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"txn-markers-to-{endpoint.broker_id}")

    def put(self, entry: _Entry) -> None:
        self._queue.append(entry)
        self._wakeup.set()

    async def _run(self) -> None:
        try:
            while True:
                raise_if_cancelled()
                await self._wakeup.wait()
                self._wakeup.clear()
                while self._queue:
                    batch = self._take_batch()
                    for entry, errors in zip(batch, await self._exchange(batch)):
                        entry.answer(errors)
        finally:
            self._disconnect()

    def _take_batch(self) -> list[_Entry]:
        batch: list[_Entry] = []
        producers: set[int] = set()
        rest: list[_Entry] = []
        for entry in self._queue:
            if len(batch) < MAX_MARKERS_PER_REQUEST and entry.request.producer_id not in producers:
                batch.append(entry)
                producers.add(entry.request.producer_id)
            else:
                rest.append(entry)
        self._queue = rest
        return batch

    async def _exchange(self, batch: list[_Entry]) -> list[dict[TopicPartition, ErrorCode]]:
        body = Q(markers=[_marker(entry) for entry in batch])
        endpoint = self.endpoint
        try:
            response = await asyncio.wait_for(self._call(body), self._timeout_s)
            return [_errors_for(entry, response) for entry in batch]
        except (OSError, EOFError, asyncio.TimeoutError, ProtocolError) as exc:
            logger.warning("WriteTxnMarkers to broker %d at %s:%d failed: %r", endpoint.broker_id, endpoint.host,
                           endpoint.port, exc)
        except Exception:  # whatever went wrong, the entries are answered and the queue goes on
            logger.exception("WriteTxnMarkers to broker %d at %s:%d failed", endpoint.broker_id, endpoint.host,
                             endpoint.port)
        self._disconnect()
        return [{tp: ErrorCode.NETWORK_EXCEPTION for tp in entry.partitions} for entry in batch]

    async def _call(self, body: object) -> object:
        if self._writer is None:
            endpoint = self.endpoint
            self._reader, self._writer = await self._security.open_connection(endpoint.host, endpoint.port)
            self._codec = ClientConnection(self._client_id)
        reader, writer, codec = self._reader, self._writer, self._codec
        _, frame = codec.send_request(ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body)
        writer.write(frame)
        await writer.drain()
        while True:
            response = codec.next_response()
            if response is not None:
                return response.body
            data = await reader.read(1 << 16)
            if not data:
                raise EOFError("the broker closed the connection")
            codec.receive_data(data)

    def _disconnect(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = self._codec = None


def _marker(entry: _Entry) -> object:
    request = entry.request
    by_topic = group_by_topic(entry.partitions, value=lambda tp: tp.partition)
    return Q.WritableTxnMarker(
        producer_id=request.producer_id,
        producer_epoch=request.producer_epoch,
        transaction_result=request.commit,
        topics=[Q.WritableTxnMarkerTopic(name=name, partition_indexes=indexes) for name, indexes in by_topic.items()],
        coordinator_epoch=request.coordinator_epoch,
    )


def _errors_for(entry: _Entry, response: object) -> dict[TopicPartition, ErrorCode]:
    """The entry's codes from the answer; a partition the answer leaves out is UNKNOWN_SERVER_ERROR."""
    answered: dict[TopicPartition, ErrorCode] = {}
    for marker in response.markers:
        if marker.producer_id == entry.request.producer_id:
            for topic in marker.topics:
                for partition in topic.partitions:
                    answered[TopicPartition(topic.name, partition.partition_index)] = ErrorCode.of(partition.error_code)
    return {tp: answered.get(tp, ErrorCode.UNKNOWN_SERVER_ERROR) for tp in entry.partitions}


class TxnMarkerChannel:
    """Per-destination queues of WriteTxnMarkers entries. Used on the broker's event loop only."""

    def __init__(self, *, client_id: str = "txn-marker-channel", request_timeout_ms: int = 30_000,
                 security: InterBrokerSecurity = PLAINTEXT) -> None:
        self._security = security
        self._client_id = client_id
        self._timeout_s = request_timeout_ms / 1000
        self._destinations: dict[LeaderEndpoint, _Destination] = {}
        self._closed = False

    def send(
        self, destination: LeaderEndpoint, request: MarkerRequest, partitions: Sequence[TopicPartition],
        on_answer: MarkerAnswer,
    ) -> None:
        """Queue the marker for ``partitions``, all led by ``destination``; ``on_answer`` gets one code each."""
        entry = _Entry(request, tuple(partitions), on_answer)
        if self._closed:
            asyncio.get_running_loop().call_soon(entry.fail, ErrorCode.NETWORK_EXCEPTION)
            return
        destination = LeaderEndpoint(*destination)
        queue = self._destinations.get(destination)
        if queue is None:
            queue = self._destinations[destination] = _Destination(
                destination, client_id=self._client_id, timeout_s=self._timeout_s, security=self._security
            )
        queue.put(entry)

    @property
    def destinations(self) -> list[LeaderEndpoint]:
        return list(self._destinations)

    async def close(self) -> None:
        """Stop every sender and close its connection; entries still queued are not answered."""
        self._closed = True
        destinations = list(self._destinations.values())
        self._destinations.clear()
        for destination in destinations:
            destination.task.cancel()
        await asyncio.gather(*(d.task for d in destinations), return_exceptions=True)

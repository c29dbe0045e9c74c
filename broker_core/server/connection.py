"""One client connection: asyncio glue around the sans-IO ``ServerConnection``.

Reading and writing are separate tasks. The reader decodes requests and
queues them with the dispatcher; the writer sends responses strictly in
request order, whatever order the handlers finish in. Records served from a
log segment go out with ``sendfile`` straight from the file when the range
is large; a small one is read and written with the rest of the response in
one write, which costs less than setting up a ``sendfile``. On a TLS
connection (``zero_copy`` off) every range is read with one ``pread`` into
the response and encrypted from there: no copy beyond the one TLS needs.

On a SASL listener a :class:`~broker_core.server.sasl_gate.SaslGate` sees
every request first: it answers the SASL requests itself and closes the
connection on anything not allowed yet. :attr:`ClientConnection.principal`
is who the connection is (SASL user, TLS certificate subject, or
``User:ANONYMOUS``), for authorization.

A frame that cannot be parsed closes this connection only, as Kafka does;
other connections are unaffected.

Request bytes come from the broker's :class:`MemoryPool`
(``queued.max.request.bytes``): a frame's size is taken as soon as its size
prefix is in, and given back once the request is answered. While the pool is
exhausted the reader reads nothing, so a large frame waits in the client's and
the kernel's buffers. Every request, an ``acks=0`` Produce too, passes through
the writer, which gives its memory back in order.

On broker shutdown the reader stops first (:meth:`ClientConnection.stop_reading`);
the writer then answers what is already handled and ends at the first request
the dispatcher dropped; :meth:`ClientConnection.abort` ends both at once.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any, Mapping

from broker_core.metrics.request_timing import clock, record_request
from broker_core.security.principal import ANONYMOUS, KafkaPrincipal
from broker_core.security.quotas.client_quota_manager import ClientQuotaManager
from broker_core.security.quotas.throttling import exempt, response_size, throttle_ms
from broker_core.server.dispatch import RequestDispatcher
from broker_core.server.memory_pool import MemoryPool
from broker_core.server.sasl_gate import GateReply, SaslGate
from broker_core.storage.fetch_slice import FetchSlice
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request, ServerConnection, encode_response_parts
from spate.protocol.errors import FrameTooLargeError, InvalidRequestError, UnsupportedVersionError
from spate.protocol.types import FileRangeRef
from spate.protocol.versions import VersionRange

logger = logging.getLogger(__name__)

READ_CHUNK = 256 * 1024
# Requests one connection may have in flight before its reader stops reading.
MAX_IN_FLIGHT_PER_CONNECTION = 64
# File ranges below this are copied into the response rather than sent with sendfile:
# a private file description, a drain and a pause of the transport cost more than
# copying a few pages.
SENDFILE_MIN_BYTES = 64 * 1024


class ClientConnection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        dispatcher: RequestDispatcher,
        *,
        listener_name: str,
        versions: Mapping[ApiKey, VersionRange],
        max_request_size: int,
        memory_pool: MemoryPool,
        gate: SaslGate | None = None,
        principal: KafkaPrincipal = ANONYMOUS,
        zero_copy: bool = True,
        quotas: ClientQuotaManager | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._dispatcher = dispatcher
        self._pool = memory_pool
        self.listener_name = listener_name
        self._gate = gate
        self._transport_principal = principal
        self._zero_copy = zero_copy
        # Client quotas: a throttled answer mutes the reader until this loop time.
        self._quotas = quotas
        self._muted_until = 0.0
        self._read_times: collections.deque[float] = collections.deque()  # of the requests queued, in order
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        client_host = peer[0] if isinstance(peer, tuple) else ""
        self._codec = ServerConnection(max_request_size=max_request_size, versions=versions, client_host=client_host)
        self._max_request_size = max_request_size
        if gate is not None:  # until authenticated: sasl.server.max.receive.size
            self._codec.limit_request_size(min(max_request_size, gate.max_receive_size))
        self._codec.principal = str(principal)  # SASL's replaces it once authenticated
        self._pending: asyncio.Queue[tuple[Request | None, Any] | None] = asyncio.Queue(MAX_IN_FLIGHT_PER_CONNECTION)
        self._tasks: tuple[asyncio.Task[None], ...] = ()
        self._reading = True
        # Pool bytes this connection holds: its unanswered requests plus ``_reserved``, the frame being read.
        self._held = 0
        self._reserved = 0
        self.waiting_for_memory = False
        # Read by the idle check, which compares it between scans.
        self.requests_read = 0
        # When the last request was read (monotonic s): the least recently used goes first past max.connections.
        self.last_active = time.monotonic()

    @property
    def principal(self) -> KafkaPrincipal:
        """The authenticated principal (SASL's once it completed), else the TLS or anonymous one."""
        if self._gate is not None and self._gate.principal is not None:
            return self._gate.principal
        return self._transport_principal

    @property
    def busy(self) -> bool:
        """A request waits for its answer, or the connection waits for request memory: not idle."""
        return self._held > self._reserved or self.waiting_for_memory

    async def serve(self) -> None:
        if not self._reading:  # stopped before it started
            self._writer.transport.abort()
            return
        reader = asyncio.create_task(self._read_requests_until_closed(), name=f"reader-{self.peer}")
        writer = asyncio.create_task(self._write_responses(), name=f"writer-{self.peer}")
        self._tasks = (reader, writer)
        try:
            await self._serve_until_done(reader, writer)
        finally:
            self._pool.release(self._held)
            self._held = self._reserved = 0
            self._writer.close()

    async def _serve_until_done(self, reader: asyncio.Task[None], writer: asyncio.Task[None]) -> None:
        await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        if not writer.done():
            # The peer stopped sending (or the broker stopped reading): answer what it asked, then stop. The
            # sentinel may wait for room in the queue, which the writer makes.
            closing = asyncio.ensure_future(self._pending.put(None))
            await asyncio.wait((closing, writer), return_when=asyncio.FIRST_COMPLETED)
            if not closing.done():
                closing.cancel()
            await asyncio.wait((writer,))
        reader.cancel()
        # Children that were cancelled or failed are settled here; only this
        # task being cancelled itself would raise.
        for outcome in await asyncio.gather(reader, writer, return_exceptions=True):
            if isinstance(outcome, Exception):
                logger.debug("connection %s ended with %r", self.peer, outcome)

    def stop_reading(self) -> None:
        """Read no more requests (broker shutdown): the writer answers what was read, then ``serve`` returns."""
        self._reading = False
        if self._tasks:
            self._tasks[0].cancel()

    def abort(self) -> None:
        """Stop reading and writing now, and drop the socket; ``serve`` then returns."""
        self._reading = False
        for task in self._tasks:
            task.cancel()
        self._writer.transport.abort()

    async def _read_requests_until_closed(self) -> None:
        try:
            await self._read_requests()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass

    async def _reserve_request_memory(self) -> None:
        """Before reading more: wait while the pool is exhausted, and take the size of a frame whose prefix is
        in (its body is what the next reads bring)."""
        if self._reserved:
            return
        pool = self._pool
        if pool.available <= 0:
            self.waiting_for_memory = True
            try:
                await pool.wait_for_memory()
            finally:
                self.waiting_for_memory = False
        size = self._codec.pending_frame_size
        if size is not None:
            pool.allocate(size)
            self._reserved = size
            self._held += size

    async def _read_requests(self) -> None:
        codec, pool, dispatcher, pending = self._codec, self._pool, self._dispatcher, self._pending
        while True:
            if not self._reserved and (pool.available <= 0 or codec.pending_frame_size is not None):
                await self._reserve_request_memory()
            data = await self._reader.read(READ_CHUNK)
            if not data:
                return
            if self._muted_until:  # throttled: what arrived meanwhile waits (KIP-219's muted channel)
                await self._wait_while_muted()
            codec.receive_data(data)
            while True:
                gate = self._gate
                if gate is not None and gate.expects_raw_token:
                    token = codec.next_frame()  # raises FrameTooLargeError past the limit, caught below
                    if token is None:
                        break
                    if not await self._send_inline(await gate.answer_token(token)):
                        return
                    if gate.principal is not None:
                        codec.limit_request_size(self._max_request_size)
                        codec.principal = str(gate.principal)
                    continue
                try:
                    request = codec.next_request()
                except UnsupportedVersionError as exc:
                    self._release_reserved()
                    if exc.header is not None and exc.header.api_key == ApiKey.API_VERSIONS:
                        reply = codec.encode_unsupported_version(exc.header.correlation_id)
                        await pending.put((None, reply))
                        continue
                    logger.info("closing %s: %s", self.peer, exc)
                    return
                except FrameTooLargeError as exc:
                    logger.warning("closing %s: %s", self.peer, exc)
                    return
                except InvalidRequestError as exc:
                    logger.info("closing %s: malformed request: %s", self.peer, exc)
                    return
                if request is None:
                    break
                self.requests_read += 1
                self.last_active = time.monotonic()
                if gate is not None:
                    refusal = gate.refusal(request)
                    if refusal is not None:
                        logger.info("closing %s on listener %s: %s", self.peer, self.listener_name, refusal)
                        return
                    if request.api_key in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE):
                        if not await self._send_inline(await gate.answer(request)):
                            return
                        if gate.principal is not None:
                            codec.limit_request_size(self._max_request_size)
                            codec.principal = str(gate.principal)
                        continue
                if self._reserved:  # the frame whose size was taken before it was complete
                    self._reserved = 0
                else:
                    pool.allocate(request.size)
                    self._held += request.size
                if self._quotas is not None:
                    self._read_times.append(clock())
                await pending.put((request, await dispatcher.submit(request, self.listener_name)))

    async def _send_inline(self, reply: GateReply) -> bool:
        """Queue a reply the connection made itself; False when the connection must close after it."""
        self._release_reserved()
        if reply.data:
            await self._pending.put((None, reply.data))
        return not reply.close

    def _release_reserved(self) -> None:
        if self._reserved:
            self._pool.release(self._reserved)
            self._held -= self._reserved
            self._reserved = 0

    async def _write_responses(self) -> None:
        pending, pool = self._pending, self._pool
        while True:
            item = await pending.get()
            if item is None:
                return
            request, payload = item
            if request is None:  # a reply encoded up front
                self._writer.write(payload)
                await self._writer.drain()
                continue
            try:
                body = await payload
            except asyncio.CancelledError:
                if payload.cancelled():  # the broker is stopping and dropped the request
                    return
                raise
            except Exception:
                logger.exception("%s v%d from %s failed; closing", request.api_key.name, request.api_version, self.peer)
                self._writer.transport.abort()
                return
            writing_at = clock()
            read_at = self._read_times.popleft() if self._read_times else writing_at
            throttled_ms = 0
            if request.expects_response:
                parts = encode_response_parts(request.header.correlation_id, request.api_key, request.api_version,
                                              body)
                if self._quotas is not None and self._quotas.has_quotas():
                    throttled_ms = self._throttle(request, response_size(parts), writing_at - read_at)
                    if throttled_ms and hasattr(body, "throttle_time_ms"):
                        body.throttle_time_ms = max(body.throttle_time_ms, throttled_ms)
                        parts = encode_response_parts(request.header.correlation_id, request.api_key,
                                                      request.api_version, body)
                # Everything up to the next large file range goes out in one write (one syscall).
                chunk: list[Any] = []
                for part in parts:
                    if not isinstance(part, FileRangeRef):
                        chunk.append(part)
                    elif part.size < SENDFILE_MIN_BYTES or not self._zero_copy:
                        chunk.append(part.payload.read_bytes())
                    else:
                        self._writer.writelines(chunk)
                        chunk = []
                        await self._send_file_range(part)
                self._writer.writelines(chunk)
                await self._writer.drain()
            elif self._quotas is not None and self._quotas.has_quotas():  # acks=0: no answer, still throttled
                throttled_ms = self._throttle(request, 0, writing_at - read_at)
            if throttled_ms:
                self._mute(throttled_ms)
            self._held -= request.size
            pool.release(request.size)
            if self._dispatcher.metrics is not None:
                record_request(self._dispatcher.metrics, request, payload, body, writing_at)

    def _throttle(self, request: Request, response_bytes: int, handling_s: float) -> int:
        assert self._quotas is not None
        if exempt(request.api_key, request.body):
            return 0
        return throttle_ms(self._quotas, request.api_key, self.principal.name, request.header.client_id or "",
                           request_bytes=request.size, response_bytes=response_bytes, handling_s=handling_s)

    def _mute(self, throttle_ms: int) -> None:
        """Read nothing more for ``throttle_ms`` (the answer carrying it is already on its way)."""
        until = asyncio.get_running_loop().time() + throttle_ms / 1000
        self._muted_until = max(self._muted_until, until)

    async def _wait_while_muted(self) -> None:
        loop = asyncio.get_running_loop()
        while (remaining := self._muted_until - loop.time()) > 0:
            await asyncio.sleep(remaining)
        self._muted_until = 0.0

    async def _send_file_range(self, ref: FileRangeRef) -> None:
        file_slice: FetchSlice = ref.payload
        # A private file description: sendfile moves the file position, and the
        # segment's own file object must not see that.
        try:
            source = open(f"/proc/self/fd/{file_slice.fileno()}", "rb", buffering=0)
        except OSError:
            self._writer.write(file_slice.read_bytes())
            return
        with source:
            await self._writer.drain()
            loop = asyncio.get_running_loop()
            sent = await loop.sendfile(self._writer.transport, source, file_slice.position, file_slice.size)
            if sent != file_slice.size:
                raise ConnectionError(f"sent {sent} of {file_slice.size} bytes of a log segment")

"""One client connection: asyncio glue around the sans-IO ``ServerConnection``.

Reading and writing are separate tasks. The reader decodes requests and
queues them with the dispatcher; the writer sends responses strictly in
request order, whatever order the handlers finish in. Records served from a
log segment go out with ``sendfile`` straight from the file when the range
is large; a small one is read and written with the rest of the response in
one write, which costs less than setting up a ``sendfile``.

A frame that cannot be parsed closes this connection only, as Kafka does;
other connections are unaffected.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping

from broker_core.server.dispatch import RequestDispatcher
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
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._dispatcher = dispatcher
        self.listener_name = listener_name
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        client_host = peer[0] if isinstance(peer, tuple) else ""
        self._codec = ServerConnection(max_request_size=max_request_size, versions=versions, client_host=client_host)
        self._pending: asyncio.Queue[tuple[Request | None, Any] | None] = asyncio.Queue(MAX_IN_FLIGHT_PER_CONNECTION)
        self._tasks: tuple[asyncio.Task[None], ...] = ()

    async def serve(self) -> None:
        reader = asyncio.create_task(self._read_requests_until_closed(), name=f"reader-{self.peer}")
        writer = asyncio.create_task(self._write_responses(), name=f"writer-{self.peer}")
        self._tasks = (reader, writer)
        await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        if not writer.done():
            # The peer stopped sending: answer what it asked, then stop. The
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
        self._writer.close()

    def close(self) -> None:
        """Stop reading and writing now (broker shutdown); ``serve`` then returns."""
        for task in self._tasks:
            task.cancel()
        self._writer.transport.abort()

    async def _read_requests_until_closed(self) -> None:
        try:
            await self._read_requests()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass

    async def _read_requests(self) -> None:
        while True:
            data = await self._reader.read(READ_CHUNK)
            if not data:
                return
            self._codec.receive_data(data)
            while True:
                try:
                    request = self._codec.next_request()
                except UnsupportedVersionError as exc:
                    if exc.header is not None and exc.header.api_key == ApiKey.API_VERSIONS:
                        reply = self._codec.encode_unsupported_version(exc.header.correlation_id)
                        await self._pending.put((None, reply))
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
                future = await self._dispatcher.submit(request, self.listener_name)
                if request.expects_response:
                    await self._pending.put((request, future))

    async def _write_responses(self) -> None:
        while True:
            item = await self._pending.get()
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
            parts = encode_response_parts(request.header.correlation_id, request.api_key, request.api_version, body)
            # Everything up to the next large file range goes out in one write (one syscall).
            pending: list[Any] = []
            for part in parts:
                if not isinstance(part, FileRangeRef):
                    pending.append(part)
                elif part.size < SENDFILE_MIN_BYTES:
                    pending.append(part.payload.read_bytes())
                else:
                    self._writer.writelines(pending)
                    pending = []
                    await self._send_file_range(part)
            self._writer.writelines(pending)
            await self._writer.drain()

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

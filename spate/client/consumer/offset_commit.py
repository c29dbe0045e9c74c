"""Committed offsets of a consumer with a group id: commits, lookups, auto-commit.

:class:`OffsetCommitter` sends OffsetCommit and OffsetFetch to the group's
coordinator over the connection the consumer coordinator keeps to it
(:class:`GroupLink` is what it needs from there). Commits carry the
member's generation and member id; a commit from outside the group's
membership (an assign-only consumer) carries generation -1 and an empty
member id, which the coordinator accepts while the group has no members.

Newly assigned partitions start at the committed offset, looked up
asynchronously from ``poll``; only a partition without one falls back to
``auto_offset_reset``. With auto-commit, positions are committed
asynchronously every ``auto_commit_interval_ms``.

What an answer means for the committer:

* coordinator moved or loading, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT,
  UNSTABLE_OFFSET_COMMIT (a transaction holding offsets is still open):
  retry;
* REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID on a commit: the member no longer owns its partitions
  (:class:`~spate.client.errors.CommitFailedError`);
* anything else: a KafkaError for the caller.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Iterable, Mapping, Protocol

from spate.client.commit_offsets import committed_partitions, partition_error_codes
from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.consumer.subscription_state import SubscriptionState
from spate.client.errors import ClientError, CommitFailedError, NetworkError
from spate.client.net.connection import InFlightRequest
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.structs import OffsetAndMetadata, TopicPartition, group_by_topic

log = logging.getLogger(__name__)

E = ErrorCode

COORDINATOR_ERRORS = frozenset({E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE})
RETRY_COMMIT_ERRORS = frozenset(
    {E.COORDINATOR_LOAD_IN_PROGRESS, E.UNKNOWN_TOPIC_OR_PARTITION, E.REQUEST_TIMED_OUT, E.UNSTABLE_OFFSET_COMMIT}
)
REBALANCED_ERRORS = frozenset(
    {E.REBALANCE_IN_PROGRESS, E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID}
)


def offset_commit_body(
    group_id: str,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
) -> Any:
    """An OffsetCommit; generation -1 and member id "" commit from outside the group's membership."""
    by_topic = committed_partitions(offsets, OffsetCommitRequest.OffsetCommitRequestPartition)
    return OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=n, partitions=p) for n, p in by_topic.items()],
    )


def offset_fetch_body(group_id: str, partitions: Iterable[TopicPartition]) -> Any:
    by_topic = group_by_topic(sorted(set(partitions)), value=lambda tp: tp.partition)
    return OffsetFetchRequest(
        group_id=group_id,
        topics=[
            OffsetFetchRequest.OffsetFetchRequestTopic(name=name, partition_indexes=numbers)
            for name, numbers in by_topic.items()
        ],
    )


def offset_fetch_result(
    body: Any,
) -> tuple[ErrorCode, dict[TopicPartition, tuple[ErrorCode, OffsetAndMetadata | None]]]:
    """The group-level answer, and per partition its answer and committed offset (None: none)."""
    results: dict[TopicPartition, tuple[ErrorCode, OffsetAndMetadata | None]] = {}
    group_code = ErrorCode.of(getattr(body, "error_code", 0))
    for topic in body.topics:
        for part in topic.partitions:
            code = ErrorCode.of(part.error_code)
            committed = None
            if code == E.NONE and part.committed_offset >= 0:
                committed = OffsetAndMetadata(part.committed_offset, part.metadata, part.committed_leader_epoch)
            results[TopicPartition(topic.name, part.partition_index)] = (code, committed)
    return group_code, results


class GroupLink(Protocol):
    """What committing needs from the group membership (the consumer coordinator)."""

    generation_id: int

    @property
    def coordinator_node(self) -> int | None: ...

    def find_coordinator(self, now: float) -> None: ...

    def ensure_coordinator(self, deadline: float) -> int: ...

    def coordinator_dead(self, why: str) -> None: ...

    def commit_generation(self) -> tuple[int, str]: ...

    def commit_refused(self, code: ErrorCode) -> None: ...


class OffsetCommitter:
    def __init__(
        self,
        group: GroupLink,
        network: NetworkClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        errors: deque[BaseException],
    ) -> None:
        self._group = group
        self._network = network
        self._subscriptions = subscriptions
        self.group_id = config.group
        self.group_instance_id = config.group_instance_id
        self.enable_auto_commit = config.enable_auto_commit
        self._auto_commit_interval = config.auto_commit_interval_ms / 1000
        self._clock = clock
        self._retrier = Retrier(network.backoff, clock)
        self._errors = errors  # shared with the coordinator: raised from the consumer's poll
        self._next_auto_commit = clock() + self._auto_commit_interval
        self._async_commits: list[tuple[InFlightRequest, Future[None]]] = []
        self._offset_fetch: InFlightRequest | None = None
        self._offset_fetch_retry_at = 0.0

    # --- commits ------------------------------------------------------------------------------

    def positions(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: OffsetAndMetadata(offset) for tp, offset in self._subscriptions.positions().items()}

    def commit_sync(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], deadline: float) -> None:
        """Commit and wait, retrying until ``deadline``; CommitFailedError if the group moved on."""
        if not offsets:
            return

        def attempt(deadline: float) -> None:
            node = self._group.ensure_coordinator(deadline)
            generation, member = self._group.commit_generation()
            body = offset_commit_body(self.group_id, generation, member, self.group_instance_id, offsets)
            try:
                _, response = self._network.request(node, ApiKey.OFFSET_COMMIT, body, deadline=deadline)
            except NetworkError:
                self._group.coordinator_dead("the commit's connection failed")
                raise
            self._check_commit(partition_error_codes(response))

        self._retrier.call("commit", attempt, deadline)

    def commit_async(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> Future[None]:
        """Send a commit; the Future resolves during a later poll (it is not retried)."""
        future: Future[None] = Future()
        if not offsets:
            future.set_result(None)
            return future
        try:
            node = self._group.coordinator_node
            if node is None:
                self._group.find_coordinator(self._clock())
                raise KafkaError(E.COORDINATOR_NOT_AVAILABLE,
                                 f"the coordinator of group {self.group_id!r} is not known yet; nothing was committed")
            generation, member = self._group.commit_generation()
            body = offset_commit_body(self.group_id, generation, member, self.group_instance_id, offsets)
            request = self._network.send(node, ApiKey.OFFSET_COMMIT, body)
        except (ClientError, KafkaError) as exc:
            future.set_exception(exc)
            return future
        self._async_commits.append((request, future))
        return future

    def process_async_commits(self) -> None:
        still: list[tuple[InFlightRequest, Future[None]]] = []
        for request, future in self._async_commits:
            if not request.done:
                still.append((request, future))
                continue
            if request.error is not None:
                self._group.coordinator_dead(str(request.error))
                future.set_exception(request.error)
                continue
            try:
                self._check_commit(partition_error_codes(request.response))
            except (ClientError, KafkaError) as exc:
                future.set_exception(exc)
            else:
                future.set_result(None)
        self._async_commits = still

    def wait_for_async_commits(self, deadline: float) -> None:
        while self._async_commits and self._clock() < deadline:
            self._network.poll(min(0.05, max(0.0, deadline - self._clock())))
            self.process_async_commits()

    def _check_commit(self, errors: Mapping[TopicPartition, ErrorCode]) -> None:
        failures = {tp: code for tp, code in errors.items() if code != E.NONE}
        if not failures:
            return
        codes = set(failures.values())
        rebalanced = codes & REBALANCED_ERRORS
        if rebalanced:
            code = next(iter(rebalanced))
            self._group.commit_refused(code)
            if code == E.FENCED_INSTANCE_ID:
                raise KafkaError(code, f"commit to group {self.group_id!r}: another consumer uses this group_instance_id")
            raise CommitFailedError(
                code,
                f"commit to group {self.group_id!r} refused: the group has rebalanced (or has members, for a "
                "consumer outside it), so these partitions may belong to another member now",
            )
        if codes & COORDINATOR_ERRORS:
            self._group.coordinator_dead(next(iter(codes & COORDINATOR_ERRORS)).name)
        retriable = codes & (RETRY_COMMIT_ERRORS | COORDINATOR_ERRORS)
        fatal = codes - retriable
        detail = ", ".join(f"{tp}: {code.name}" for tp, code in sorted(failures.items()))
        raise KafkaError(next(iter(fatal or retriable)), f"commit to group {self.group_id!r}: {detail}")

    # --- auto-commit --------------------------------------------------------------------------

    def restart_auto_commit_timer(self, now: float) -> None:
        self._next_auto_commit = now + self._auto_commit_interval

    def maybe_auto_commit(self, now: float, *, member_ready: bool) -> None:
        """Commit every position asynchronously once the interval has passed (and the member has partitions)."""
        if not self.enable_auto_commit or now < self._next_auto_commit:
            return
        self._next_auto_commit = now + self._auto_commit_interval
        if not member_ready or self._group.coordinator_node is None:
            return
        self.commit_async(self.positions()).add_done_callback(self._log_auto_commit)

    def _log_auto_commit(self, future: Future[None]) -> None:
        error = future.exception()
        if error is not None:
            log.warning("auto-commit of group %r failed: %s", self.group_id, error)

    # --- committed offsets --------------------------------------------------------------------

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], deadline: float
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offset of each partition (None: nothing committed), retrying until ``deadline``."""
        wanted = sorted(set(partitions))
        if not wanted:
            return {}

        def attempt(deadline: float) -> dict[TopicPartition, OffsetAndMetadata | None]:
            node = self._group.ensure_coordinator(deadline)
            try:
                _, response = self._network.request(
                    node, ApiKey.OFFSET_FETCH, offset_fetch_body(self.group_id, wanted), deadline=deadline
                )
            except NetworkError:
                self._group.coordinator_dead("the offset fetch's connection failed")
                raise
            group_code, results = offset_fetch_result(response)
            codes = [group_code] + [results.get(tp, (E.NONE, None))[0] for tp in wanted]
            for code in codes:
                if code in COORDINATOR_ERRORS:
                    self._group.coordinator_dead(code.name)
                if code != E.NONE:
                    raise KafkaError(code, f"fetch the committed offsets of group {self.group_id!r}")
            return {tp: results.get(tp, (E.NONE, None))[1] for tp in wanted}

        return self._retrier.call("committed", attempt, deadline)

    def refresh_committed(self, now: float) -> None:
        """Look up committed offsets for partitions that have no position yet (asynchronously)."""
        request = self._offset_fetch
        if request is not None:
            if not request.done:
                return
            self._offset_fetch = None
            self._apply_committed(request, now)
        wanted = self._subscriptions.awaiting_committed()
        if not wanted or now < self._offset_fetch_retry_at:
            return
        node = self._group.coordinator_node
        if node is None:
            self._group.find_coordinator(now)
            return
        try:
            self._offset_fetch = self._network.send(
                node,
                ApiKey.OFFSET_FETCH,
                offset_fetch_body(self.group_id, wanted),
                context=(wanted, self._group.generation_id),
            )
        except ClientError as exc:
            self._group.coordinator_dead(str(exc))

    def _apply_committed(self, request: InFlightRequest, now: float) -> None:
        if request.error is not None:
            self._group.coordinator_dead(str(request.error))
            return
        group_code, results = offset_fetch_result(request.response)
        if group_code in COORDINATOR_ERRORS:
            self._group.coordinator_dead(group_code.name)
            return
        if group_code != E.NONE:
            self._offset_fetch_retry_at = now + self._network.backoff.delay(0)
            if not group_code.retriable:
                self._errors.append(KafkaError(group_code, f"fetch committed offsets of group {self.group_id!r}"))
            return
        wanted, generation = request.context
        if generation != self._group.generation_id:
            return  # answered for an earlier assignment; the partitions are looked up again
        for tp in wanted:
            if not self._subscriptions.is_assigned(tp):
                continue
            state = self._subscriptions.state(tp)
            if state.position is not None or state.reset is not None:
                continue  # the application chose a position meanwhile
            code, committed = results.get(tp, (E.NONE, None))
            if code == E.NONE and committed is not None:
                self._subscriptions.seek(tp, committed.offset)
            elif code in (E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION):
                state.committed_checked = True  # nothing committed: auto_offset_reset decides
            elif code.retriable:
                self._offset_fetch_retry_at = now + self._network.backoff.delay(0)
            else:
                state.committed_checked = True
                self._errors.append(KafkaError(code, f"fetch the committed offset of {tp}"))

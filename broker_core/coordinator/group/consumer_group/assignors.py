"""Server-side partition assignors of consumer groups: ``uniform`` (sticky, balanced) and ``range``.

An assignor maps each member to the partitions it should own, given each
member's subscribed topics, the partition count of every subscribed topic,
and the previous target assignment (which ``uniform`` keeps as much of as
balance allows). Assignments are ``{topic: frozenset(partitions)}``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Mapping, Protocol

Assignment = Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class AssignmentSpec:
    """What an assignor sees: ``subscriptions`` by member id, ``partition_counts`` by topic name."""

    subscriptions: Mapping[str, frozenset[str]]
    partition_counts: Mapping[str, int]
    previous: Mapping[str, Assignment]


class PartitionAssignor(Protocol):
    name: str

    def assign(self, spec: AssignmentSpec) -> dict[str, dict[str, frozenset[int]]]: ...


class UnsupportedAssignorError(ValueError):
    """A member asked for an assignor this broker does not run (UNSUPPORTED_ASSIGNOR)."""


def _freeze(assignment: dict[str, dict[str, set[int]]]) -> dict[str, dict[str, frozenset[int]]]:
    return {m: {t: frozenset(ps) for t, ps in topics.items() if ps} for m, topics in assignment.items()}


class UniformAssignor:
    """Spreads all subscribed partitions so member loads differ by at most one where subscriptions allow.

    Sticky: a member keeps the partitions of its previous target up to its
    share; only the surplus moves, to the least loaded eligible members.
    """

    name = "uniform"

    def assign(self, spec: AssignmentSpec) -> dict[str, dict[str, frozenset[int]]]:
        members = sorted(spec.subscriptions)
        result: dict[str, dict[str, set[int]]] = {m: {} for m in members}
        if not members:
            return {}
        eligible: dict[str, list[str]] = {}
        for member in members:
            for topic in spec.subscriptions[member]:
                if spec.partition_counts.get(topic, 0) > 0:
                    eligible.setdefault(topic, []).append(member)
        total = sum(spec.partition_counts[t] for t in eligible)
        quota = -(-total // len(members))  # ceil: no member keeps more than this
        load = dict.fromkeys(members, 0)
        taken: set[tuple[str, int]] = set()
        for member in members:
            for topic, partitions in sorted(spec.previous.get(member, {}).items()):
                if topic not in spec.subscriptions[member] or topic not in eligible:
                    continue
                for p in sorted(partitions):
                    if p < spec.partition_counts[topic] and load[member] < quota and (topic, p) not in taken:
                        result[member].setdefault(topic, set()).add(p)
                        taken.add((topic, p))
                        load[member] += 1
        for topic in sorted(eligible):
            # Least loaded eligible member first; ties go to the smallest member id.
            heap = [(load[m], m) for m in eligible[topic]]
            heapq.heapify(heap)
            for p in range(spec.partition_counts[topic]):
                if (topic, p) in taken:
                    continue
                count, member = heapq.heappop(heap)
                result[member].setdefault(topic, set()).add(p)
                load[member] = count + 1
                heapq.heappush(heap, (count + 1, member))
        _even_out(result, load, eligible, quota)
        return _freeze(result)


def _even_out(result: dict[str, dict[str, set[int]]], load: dict[str, int], eligible: dict[str, list[str]],
              quota: int) -> None:
    """Keeping previous partitions can leave a member at ``quota`` while another eligible one has far less:
    move partitions from the most to the least loaded eligible member while they differ by more than one."""
    for topic, candidates in eligible.items():
        for _ in range(sum(len(result[m].get(topic, ())) for m in candidates)):
            richest = max(candidates, key=lambda m: (len(result[m].get(topic, ())) > 0, load[m]))
            poorest = min(candidates, key=lambda m: (load[m], m))
            if load[richest] - load[poorest] <= 1 or not result[richest].get(topic):
                break
            p = max(result[richest][topic])
            result[richest][topic].discard(p)
            result[poorest].setdefault(topic, set()).add(p)
            load[richest] -= 1
            load[poorest] += 1


class RangeAssignor:
    """Per topic, its subscribers sorted by member id get contiguous ranges; the first ones one more."""

    name = "range"

    def assign(self, spec: AssignmentSpec) -> dict[str, dict[str, frozenset[int]]]:
        result: dict[str, dict[str, set[int]]] = {m: {} for m in spec.subscriptions}
        topics = {t for subscribed in spec.subscriptions.values() for t in subscribed}
        for topic in sorted(topics):
            count = spec.partition_counts.get(topic, 0)
            subscribers = sorted(m for m, subscribed in spec.subscriptions.items() if topic in subscribed)
            if count <= 0 or not subscribers:
                continue
            share, extra = divmod(count, len(subscribers))
            start = 0
            for index, member in enumerate(subscribers):
                size = share + (1 if index < extra else 0)
                if size:
                    result[member][topic] = set(range(start, start + size))
                start += size
        return _freeze(result)


ASSIGNORS: dict[str, PartitionAssignor] = {a.name: a for a in (UniformAssignor(), RangeAssignor())}


def assignors_named(names: list[str]) -> list[PartitionAssignor]:
    """``group.consumer.assignors``: names of the built-in assignors, the first the default."""
    unknown = [n for n in names if n not in ASSIGNORS]
    if unknown or not names:
        raise UnsupportedAssignorError(
            f"group.consumer.assignors: unknown assignor(s) {unknown or names}; choose from {sorted(ASSIGNORS)}"
        )
    return [ASSIGNORS[n] for n in names]

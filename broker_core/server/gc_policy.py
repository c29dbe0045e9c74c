"""How the broker process's garbage collector runs: for a server whose heap is mostly long-lived.

CPython's defaults suit short programs: the youngest generation is collected
every 700 net allocations of container objects, and the whole heap once
enough survivors have piled up. A broker makes a few hundred short-lived
objects per request and holds hundreds of thousands of long-lived ones
(modules, partitions, logs, connections). Every collection stops the event
loop, and a full one walks all of those objects: at 1,000 producing
connections the collector took a quarter of the broker's CPU, and its pauses
queued requests long enough to put p99 produce latency in the hundreds of
milliseconds; at 10,000 partitions one full collection took 0.3 to 1 s.

So, once the broker has started, it collects once and moves every object
then alive into the permanent generation (``gc.freeze``), which collections
never walk again, and collects the young generations less often. Cycles made
after start-up are still collected, and garbage without cycles goes, as
always, by reference counting at once. The price: a cycle among objects
frozen at start-up (say, the partitions of a topic that existed then and is
deleted later) stays in memory, so the memory that can be held that way is
bounded by the heap the broker had when it started.

The environment variable ``SPATE_GC`` chooses: ``server`` (the default, as
above), ``python`` (CPython's own settings, nothing frozen), or three
thresholds ``G0,G1,G2`` (as ``gc.set_threshold`` takes them) used with the
freeze.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Mapping

ENV_VAR = "SPATE_GC"
SERVER_THRESHOLDS = (5_000, 10, 10)


class GcPolicyError(ValueError):
    """``SPATE_GC`` holds something other than ``server``, ``python`` or three thresholds."""


@dataclass(frozen=True)
class GcPolicy:
    """``thresholds`` None: leave the interpreter's collector as it is."""

    thresholds: tuple[int, int, int] | None

    @property
    def name(self) -> str:
        if self.thresholds is None:
            return "python"
        return "server" if self.thresholds == SERVER_THRESHOLDS else ",".join(map(str, self.thresholds))

    def apply(self) -> int:
        """Apply this policy to the process once the broker has started; returns how many objects were frozen."""
        if self.thresholds is None:
            return 0
        gc.collect()  # what start-up left as garbage is collected, not frozen for good
        gc.freeze()
        gc.set_threshold(*self.thresholds)
        return gc.get_freeze_count()


def policy_from_env(environ: Mapping[str, str]) -> GcPolicy:
    """The policy ``SPATE_GC`` names in ``environ`` (the server policy when unset or empty)."""
    value = environ.get(ENV_VAR, "").strip()
    if value in ("", "server"):
        return GcPolicy(SERVER_THRESHOLDS)
    if value == "python":
        return GcPolicy(None)
    parts = value.split(",")
    try:
        thresholds = tuple(int(part) for part in parts)
    except ValueError:
        thresholds = ()
    if len(thresholds) != 3 or thresholds[0] < 1 or min(thresholds) < 0:
        raise GcPolicyError(
            f"{ENV_VAR}={value!r}: expected 'server', 'python' or three thresholds G0,G1,G2 "
            "(G0 at least 1, none negative), e.g. 5000,10,10"
        )
    return GcPolicy(thresholds)  # type: ignore[arg-type]

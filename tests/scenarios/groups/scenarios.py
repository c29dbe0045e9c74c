"""Membership scenarios every client library must pass against Spate's coordinator."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from tests.scenarios.groups.members import (
    Member,
    balanced,
    close_all,
    covered,
    spread,
    start_all,
    wait_until,
)
from tests.scenarios.groups.topics import create_topic

PARTITIONS = 6
SETTLE_S = 30.0


def grow_spread_idle_and_close(member_cls: type[Member], bootstrap: str, topic: str, group: str,
                               *, session_ms: int = 6000, assignor: str = "range") -> None:
    """3 members get 2 partitions each; 5 share them 2/1/1/1/1; of 7 one is idle; a closed member's
    partitions move to the others well within the session timeout (it left the group)."""
    create_topic(bootstrap, topic, PARTITIONS)

    def make() -> Member:
        return member_cls(bootstrap, group, topic, session_ms=session_ms, assignor=assignor)

    members = start_all([make() for _ in range(3)])
    try:
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [2, 2, 2], SETTLE_S,
                   "three members with two partitions each")
        members += start_all([make(), make()])
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [1, 1, 1, 1, 2], SETTLE_S,
                   "five members sharing six partitions")
        members += start_all([make(), make()])
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [0, 1, 1, 1, 1, 1, 1], SETTLE_S,
                   "seven members on six partitions, one idle")

        leaving = next(m for m in members if m.assignment())
        members.remove(leaving)
        started = time.monotonic()
        leaving.close()
        moved_after = wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [1] * 6, SETTLE_S,
                                 "the closed member's partition moving to the idle one")
        assert time.monotonic() - started < session_ms / 1000, (
            f"partitions of a member that left moved only after {moved_after:.1f}s"
        )
    finally:
        close_all(members)


class KilledMember:
    """A member in a child process; its assignment as last printed."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str, session_ms: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.scenarios.groups.consumer_process", client, bootstrap, group, topic, str(session_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self._assignment: frozenset[int] = frozenset()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._assignment = frozenset(json.loads(line))

    def assignment(self) -> frozenset[int]:
        return self._assignment

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)


def killed_member_partitions_move_after_session_timeout(
    member_cls: type[Member], client: str, bootstrap: str, topic: str, group: str, *, session_ms: int = 6000
) -> float:
    """SIGKILL one of three members: nobody leaves, so its partitions move only once its session expires."""
    create_topic(bootstrap, topic, PARTITIONS)
    victim = KilledMember(client, bootstrap, group, topic, session_ms)
    members = start_all([member_cls(bootstrap, group, topic, session_ms=session_ms) for _ in range(2)])
    try:
        everyone = [*members, victim]
        wait_until(lambda: covered(everyone, PARTITIONS) and spread(everyone) == [2, 2, 2], SETTLE_S,
                   "three members (one in a child process) with two partitions each")
        victim.kill()
        killed_at = time.monotonic()
        wait_until(lambda: balanced(members, PARTITIONS), session_ms / 1000 + SETTLE_S,
                   "the killed member's partitions moving to the survivors")
        elapsed = time.monotonic() - killed_at
        # It heartbeat at most one interval before dying, so its session ends no sooner than this.
        assert elapsed >= session_ms / 1000 - 1.0, f"partitions moved after {elapsed:.1f}s, before the session ended"
        return elapsed
    finally:
        victim.kill()
        close_all(members)

"""A group member in its own process, so a test can SIGKILL it (no LeaveGroup, no goodbye).

Run as ``python -m tests.scenarios.groups.consumer_process CLIENT BOOTSTRAP GROUP TOPIC SESSION_MS``.
Prints the sorted partition list as JSON on stdout whenever its assignment
changes, and polls until killed.
"""

from __future__ import annotations

import json
import sys
import time

from tests.scenarios.groups.members import MEMBERS


def main(argv: list[str]) -> None:
    client, bootstrap, group, topic, session_ms = argv
    member = MEMBERS[client](bootstrap, group, topic, session_ms=int(session_ms)).start()
    last = None
    while True:
        current = sorted(member.assignment())
        if current != last:
            print(json.dumps(current), flush=True)
            last = current
        time.sleep(0.05)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Ending a task's loop when the task was cancelled, even if the cancel was swallowed on its way.

On Python 3.11, ``asyncio.wait_for`` hands back its awaitable's outcome (a
result, or an error such as a refused connection) when a cancel arrives just
as that awaitable completes, and the cancel is lost. A loop that treats such
an error as "retry later" then outlives the stop that cancelled it, and
whoever waits for the task (a broker shutting down, ``asyncio.run`` at its
end) waits for good. The task still counts the cancel request
(``Task.cancelling``), so a loop asks at each turn.
"""

from __future__ import annotations

import asyncio


def raise_if_cancelled() -> None:
    """Raise CancelledError when the running task has been asked to stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError()

"""Killing what a test started as a process group (spark-submit: the launcher, the JVM, the Python driver and
its workers)."""

from __future__ import annotations

import os
import signal
import subprocess


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group ``process`` leads and wait for it; nothing to do once it has exited."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()

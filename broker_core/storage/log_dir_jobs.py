"""Jobs on many logs, run by a pool of threads per log dir (``num.recovery.threads.per.data.dir``).

Kafka loads and closes logs this way: one fixed pool per log dir, each job one
log. Closing a log is mostly fsyncs, which release the GIL and which the
filesystem serves together (on ext4, concurrent fsyncs share a journal
commit), so a few threads make a clean shutdown of thousands of logs many
times faster than one log after another.

Each job touches one log only; what logs share (the open-file cache, the
log-dir failure channel) must be safe for the duration (see
``OpenFileCache.stop_evicting``). A job that raises does not stop the other
jobs of its dir: its exception is returned with its dir's.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Mapping, Sequence

Job = Callable[[], None]


def run_per_log_dir(jobs: Mapping[Path, Sequence[Job]], threads_per_dir: int) -> dict[Path, list[BaseException]]:
    """Run every dir's jobs on ``threads_per_dir`` threads of its own; wait for all of them.

    Returns the exceptions raised, by dir (an empty list: every job of that dir completed).
    """
    if threads_per_dir < 1:
        raise ValueError(f"threads per log dir must be at least 1, not {threads_per_dir}")
    pools = {
        log_dir: ThreadPoolExecutor(threads_per_dir, thread_name_prefix=f"log-dir-{log_dir.name}")
        for log_dir, dir_jobs in jobs.items() if dir_jobs
    }
    try:
        futures = {log_dir: [pool.submit(job) for job in jobs[log_dir]] for log_dir, pool in pools.items()}
        errors: dict[Path, list[BaseException]] = {log_dir: [] for log_dir in jobs}
        for log_dir, dir_futures in futures.items():
            for future in dir_futures:
                error = future.exception()
                if error is not None:
                    errors[log_dir].append(error)
        return errors
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True)

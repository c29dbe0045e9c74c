"""How a job logs: one line per event on stderr, with time, level and logger; py4j's chatter left out."""

from __future__ import annotations

import logging


def configure_job_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    logging.getLogger("py4j").setLevel(logging.WARNING)

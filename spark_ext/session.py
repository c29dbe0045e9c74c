"""A SparkSession set up for Spate: workers that run this interpreter, quiet logs, no progress bars.

    from spark_ext.session import spate_session
    spark = spate_session("my-job")
    spark.read.format("spate").option("bootstrap.servers", "127.0.0.1:9092").option("subscribe", "t").load()

The settings come from ``conf/spark-defaults.conf`` and ``conf/log4j2.properties`` of the project.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Mapping

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
SPARK_DEFAULTS = CONF_DIR / "spark-defaults.conf"
LOG4J2_CONFIG = CONF_DIR / "log4j2.properties"


def read_spark_defaults(path: Path = SPARK_DEFAULTS) -> dict[str, str]:
    """Spark's properties-file format: ``key value`` (or ``key=value``) per line, ``#`` comments."""
    settings: dict[str, str] = {}
    if not path.is_file():
        return settings
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, value = (re.split(r"\s*=\s*|\s+", line, maxsplit=1) + [""])[:2]
        settings[key] = value
    return settings


def session_settings(*, progress: bool = False, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Everything ``spate_session`` sets on the builder, in order of precedence (``extra`` wins)."""
    settings = read_spark_defaults()
    settings["spark.pyspark.python"] = sys.executable
    if LOG4J2_CONFIG.is_file():
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}"
    settings["spark.ui.showConsoleProgress"] = "true" if progress else "false"
    settings.update(extra or {})
    return settings


def spate_session(app_name: str = "spate", *, master: str | None = "local[2]", progress: bool = False,
                  extra: Mapping[str, str] | None = None):
    """The active session if there is one, else a new one built with ``session_settings``.

    ``master=None`` leaves the master to spark-submit. ``progress=True`` shows Spark's stage progress bars.
    """
    from pyspark.sql import SparkSession

    # Spark looks data sources up, and starts its Python workers, with PYSPARK_PYTHON (else `python3` on PATH).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master is not None and master.startswith("local"):
        # A local session talks to itself: no guessing (and warning) about which interface to use.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in session_settings(progress=progress, extra=extra).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session

"""spate_session: the settings of the sessions Spate builds, from conf/."""

from __future__ import annotations

import sys
from pathlib import Path

from spark_ext.session import LOG4J2_CONFIG, read_spark_defaults, session_settings, spate_session

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_spark_defaults_turn_off_progress_bars_and_the_web_ui():
    defaults = read_spark_defaults(REPO / "conf" / "spark-defaults.conf")
    assert defaults["spark.ui.showConsoleProgress"] == "false"
    assert defaults["spark.ui.enabled"] == "false"


def test_spark_properties_files_separate_key_and_value_by_spaces_or_an_equals_sign(tmp_path):
    path = tmp_path / "spark-defaults.conf"
    path.write_text("# comment\n\nspark.a   1\nspark.b=two words\nspark.c = 3\n")
    assert read_spark_defaults(path) == {"spark.a": "1", "spark.b": "two words", "spark.c": "3"}
    assert read_spark_defaults(tmp_path / "missing.conf") == {}


def test_sessions_run_workers_with_this_interpreter_and_log_quietly():
    settings = session_settings()
    assert settings["spark.pyspark.python"] == sys.executable
    assert settings["spark.driver.extraJavaOptions"] == f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}"
    assert LOG4J2_CONFIG == REPO / "conf" / "log4j2.properties"
    assert settings["spark.ui.showConsoleProgress"] == "false"


def test_progress_bars_come_back_when_asked_and_extra_settings_win():
    settings = session_settings(progress=True, extra={"spark.sql.shuffle.partitions": "8"})
    assert settings["spark.ui.showConsoleProgress"] == "true"
    assert settings["spark.sql.shuffle.partitions"] == "8"


def test_an_active_session_is_reused(spark):
    assert spate_session("another-app") is spark

"""After platform/setup.sh, a script run with the venv's python finds format("spate") from any directory.

The venv here is a fresh one whose dependencies come from the test run's environment; Spate is made
visible to it by the very step setup.sh runs (``platform/project_path.py``). The script runs in a new
process, in an empty directory, with neither PYSPARK_PYTHON nor PYTHONPATH set and with a ``python3``
on PATH that has no pyspark: nothing but the setup makes Spark find Spate.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from spate.client import Admin, NewTopic, Producer

REPO = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

SCRIPT = textwrap.dedent('''
    import json, sys
    from pyspark.sql import SparkSession

    bootstrap, topic, checkpoint, table = sys.argv[1:5]
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    batch = (spark.read.format("spate").option("bootstrap.servers", bootstrap).option("subscribe", topic).load())
    batch_count = batch.count()
    stream = (spark.readStream.format("spate").option("bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest").load())
    query = (stream.writeStream.format("memory").queryName("seen").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination(240)
    stream_count = spark.sql("SELECT count(*) AS n FROM seen").collect()[0].n
    batch.selectExpr("CAST(value AS STRING) AS value").write.format("spate-delta").mode("append").save(table)
    print("RESULT " + json.dumps({"batch": batch_count, "stream": stream_count}))
    spark.stop()
''')


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with the test run's dependencies, after setup.sh's project-path step."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # What `pip install -e .` put in place: the dependencies (pyspark, ...), without Spate itself.
    (site / "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), str(REPO / "platform" / "project_path.py")], check=True, timeout=60,
                   env={"PATH": "/usr/bin:/bin"})
    return python


def test_the_setup_step_puts_the_project_on_sys_path_and_names_the_venv_python(fresh_venv, tmp_path):
    probe = "import os, sys, pyspark_spate; print(pyspark_spate.__file__); print(os.environ['PYSPARK_PYTHON'])"
    result = subprocess.run([str(fresh_venv), "-c", probe], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    module_file, pyspark_python = result.stdout.splitlines()
    assert Path(module_file) == REPO / "pyspark_spate.py"
    assert Path(pyspark_python) == fresh_venv


def test_batch_and_streaming_reads_and_the_delta_sink_work_from_another_directory(fresh_venv, broker, unique,
                                                                                  tmp_path):
    topic = unique("topic")
    with Admin(broker.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, num_partitions=2)])
    with Producer(broker.bootstrap) as producer:
        for i in range(50):
            producer.send(topic, f"event-{i}".encode(), key=str(i).encode())
        producer.flush()
    (tmp_path / "job.py").write_text(SCRIPT)
    table = tmp_path / "table"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        [str(fresh_venv), "job.py", broker.bootstrap, topic, str(tmp_path / "checkpoint"), str(table)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "DATA_SOURCE_NOT_FOUND" not in result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    assert json.loads(line.removeprefix("RESULT ")) == {"batch": 50, "stream": 50}
    assert any((table / "_delta_log").glob("*.json"))

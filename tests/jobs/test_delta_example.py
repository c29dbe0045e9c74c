"""The Delta example: ingest a topic with the sink, query the table with Spark SQL, plot records per minute.

The script runs in-process with the suite's SparkSession; the executed notebook runs with nbclient in a
fresh kernel, both on a few hundred page views against a real broker process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from examples.delta_ingest import main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "notebooks" / "delta" / "delta_ingest_and_query.ipynb"


def test_the_script_ingests_queries_and_plots(spark, jobs_broker, unique, tmp_path, capsys):
    table, chart = tmp_path / "page_views", tmp_path / "per_minute.png"
    assert main(["--bootstrap", jobs_broker.bootstrap, "--topic", unique("page-views"), "--table", str(table),
                 "--produce", "300", "--plot", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "300 records over" in out and "/pricing" in out
    assert DeltaTable(str(table)).to_pyarrow_table().num_rows == 300
    assert chart.read_bytes().startswith(b"\x89PNG")


def notebook_outputs(notebook, kind: str) -> list:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
            if kind in out.get("data", {}) or out.get("output_type") == kind]


def test_the_notebook_is_kept_executed_with_its_plots():
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(cell.get("execution_count") for cell in notebook.cells if cell.cell_type == "code")
    assert notebook_outputs(notebook, "image/png") and not notebook_outputs(notebook, "error")


@pytest.mark.timeout(600)
def test_the_notebook_runs_on_small_data(jobs_broker, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    saved = dict(os.environ)
    os.environ.update({"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), saved.get("PYTHONPATH")])),
                       "PYSPARK_PYTHON": sys.executable, "SPATE_NOTEBOOK_EVENTS": "300",
                       "SPATE_BOOTSTRAP_SERVER": jobs_broker.bootstrap, "SPATE_NOTEBOOK_DIR": str(tmp_path)})
    try:
        NotebookClient(notebook, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(REPO)}}).execute(cwd=str(REPO))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert not notebook_outputs(notebook, "error")
    assert len(notebook_outputs(notebook, "image/png")) >= 1
    text = "".join(out.get("text", "") for out in notebook_outputs(notebook, "stream"))
    assert "300 records in the table" in text
    assert "75 records archived into" in text and "105 read across the archive and the log" in text

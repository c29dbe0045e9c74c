"""The notebooks under examples/notebooks run top to bottom on small data and draw their plots.

Each is executed with nbclient in a fresh kernel of this interpreter, against the Spark suites' broker
(``SPATE_BOOTSTRAP_SERVER``), with a few hundred events. The files keep the outputs of a full run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
NOTEBOOKS = sorted((REPO / "examples" / "notebooks").glob("*.ipynb"))

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def execute(path: Path, *, bootstrap: str | None, events: int):
    """The notebook at ``path`` after running every cell (raises CellExecutionError on the first failure)."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    saved = dict(os.environ)
    # The kernel and Spark's workers import this checkout and run this interpreter.
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [saved.get("PYTHONPATH")])])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPATE_NOTEBOOK_EVENTS"] = str(events)
    os.environ.pop("SPATE_BOOTSTRAP_SERVER", None)
    if bootstrap is not None:
        os.environ["SPATE_BOOTSTRAP_SERVER"] = bootstrap
    try:
        client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(REPO)}})
        client.execute(cwd=str(REPO))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return notebook


def outputs(notebook, kind: str) -> list:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
            if kind in out.get("data", {}) or out.get("output_type") == kind]


def test_there_are_notebooks_and_they_keep_their_outputs():
    import nbformat

    assert NOTEBOOKS
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(cell.get("execution_count") for cell in code), f"{path.name} has cells never run"
        assert outputs(notebook, "image/png"), f"{path.name} keeps no plot"
        assert not outputs(notebook, "error"), f"{path.name} keeps an error"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_the_notebook_runs_on_small_data_and_plots(path, broker):
    notebook = execute(path, bootstrap=broker.bootstrap, events=300)
    assert not outputs(notebook, "error")
    assert len(outputs(notebook, "image/png")) >= 3  # windowed views, throughput, lag
    text = "".join(out.get("text", "") for out in outputs(notebook, "stream"))
    assert "300 events" in text
    assert "lag after each commit:" in text and text.rstrip().endswith(", 0]")

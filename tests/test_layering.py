"""The house's layers: every import runs one way, and no module waits on itself.

::

    jobs ─► spark_ext ─► spate (client) ─► spate.protocol, spate.records, spate.structs ◄─ broker_core
                         spate.cli ─────► spate (client);  broker_core only inside ``spate broker``/``spate zookeeper``

The scan reads imports as written, at any depth of a module (inside
functions and ``TYPE_CHECKING`` blocks too): a circle hidden behind a
type-only import is still a circle for a reader.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("spate", "broker_core", "spark_ext", "jobs")

# Sockets, event loops, threads, files, processes and clocks belong to the edges, not to the wire format.
IO_MODULES = {
    "asyncio", "socket", "socketserver", "selectors", "ssl", "os", "io", "pathlib", "shutil",
    "tempfile", "mmap", "subprocess", "threading", "multiprocessing", "signal", "fcntl", "time",
    "datetime", "random", "logging",
}  # fmt: skip
HEAVY_MODULES = {"pyspark", "pyarrow", "numpy", "pandas", "deltalake", "delta"}
WIRE_FORMAT = ("spate.protocol", "spate.records", "spate.structs")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted
    top_level: bool  # at module level (not inside a function)
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_of(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend(Import(module, alias.name, top_level, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # `from pkg import mod` imports pkg.mod when it is a module of ours.
                targets = [f"{base}.{alias.name}" for alias in child.names if _is_module(f"{base}.{alias.name}")]
                found.extend(Import(module, target, top_level, child.lineno) for target in targets or [base])
            inner = top_level and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner)

    visit(tree, True)
    return found


def _is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    files = [path for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))]
    assert len(files) > 100, "the scan must see the code"
    return [imp for path in files for imp in _imports_of(path)]


def _in(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def _offenders(imports: list[Import], source: tuple[str, ...], forbidden: tuple[str, ...] | set[str]) -> list[str]:
    return [
        str(imp) for imp in imports
        if _in(imp.module, *source) and (_in(imp.target, *forbidden) or imp.target.split(".")[0] in forbidden)
    ]  # fmt: skip


def test_wire_format_does_no_io_and_knows_no_higher_layer(imports: list[Import]) -> None:
    higher = ("spate.client", "spate.cli", "broker_core", "spark_ext", "jobs")
    assert _offenders(imports, WIRE_FORMAT, IO_MODULES | HEAVY_MODULES) == []
    assert _offenders(imports, WIRE_FORMAT, higher) == []


def test_importing_the_protocol_does_not_load_the_client() -> None:
    import subprocess
    import sys

    probe = "import sys, spate.protocol, spate.records, spate; print(any(m.startswith('spate.client') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_broker_never_imports_the_client_the_cli_or_spark(imports: list[Import]) -> None:
    forbidden = ("spate.client", "spate.cli", "spate", "spark_ext", "jobs")
    offenders = [
        line for line in _offenders(imports, ("broker_core",), forbidden + tuple(HEAVY_MODULES))
        if not any(f" imports {allowed}" in line for allowed in WIRE_FORMAT)
    ]  # fmt: skip
    assert offenders == []


def test_the_client_knows_only_the_wire_format(imports: list[Import]) -> None:
    assert _offenders(imports, ("spate.client",), ("spate.cli", "broker_core", "spark_ext", "jobs")) == []
    assert _offenders(imports, ("spate.client",), HEAVY_MODULES) == []


def test_client_connections_know_nothing_of_producers_consumers_or_admin(imports: list[Import]) -> None:
    roles = ("spate.client.producer", "spate.client.consumer", "spate.client.admin")
    assert _offenders(imports, ("spate.client.net",), roles) == []


def test_the_cli_reaches_the_broker_only_to_start_one(imports: list[Import]) -> None:
    starters = {"spate.cli.broker", "spate.cli.zookeeper"}
    offenders = [
        str(imp) for imp in imports
        if _in(imp.module, "spate.cli") and _in(imp.target, "broker_core")
        and (imp.module not in starters or imp.top_level)
    ]  # fmt: skip
    assert offenders == []
    assert _offenders(imports, ("spate.cli",), ("spark_ext", "jobs") + tuple(HEAVY_MODULES)) == []


def test_spark_extension_uses_only_the_public_client_api(imports: list[Import]) -> None:
    internals = [
        str(imp) for imp in imports
        if _in(imp.module, "spark_ext") and _in(imp.target, "spate.client") and imp.target != "spate.client"
    ]  # fmt: skip
    assert internals == []
    assert _offenders(imports, ("spark_ext",), ("broker_core", "spate.cli", "jobs")) == []


def test_pyspark_is_imported_only_by_the_spark_extension_and_jobs(imports: list[Import]) -> None:
    assert _offenders(imports, ("spate", "broker_core"), {"pyspark", "delta", "deltalake"}) == []


def test_no_import_circles(imports: list[Import]) -> None:
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.target.split(".")[0] in PACKAGES and imp.target != imp.module:
            graph.setdefault(imp.module, set()).add(imp.target)
    circles = [component for component in _strongly_connected(graph) if len(component) > 1]
    assert circles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is a few hundred modules deep at most)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components

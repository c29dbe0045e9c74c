"""The client stays a client: no Spark, no broker internals, no asserts guarding data, a narrow public API."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import spate.client

PACKAGE_DIR = Path(spate.client.__file__).parent
MODULES = sorted(PACKAGE_DIR.rglob("*.py"))
FORBIDDEN_PREFIXES = ("pyspark", "broker_core")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE_DIR)))
def test_client_modules_import_neither_spark_nor_broker_internals(path: Path) -> None:
    bad = {name for name in imported_modules(path) if name.startswith(FORBIDDEN_PREFIXES)}
    assert bad == set(), f"{path} imports {sorted(bad)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE_DIR)))
def test_client_modules_guard_data_with_raise_not_assert(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    assert not any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def test_every_public_name_is_exported_and_importable() -> None:
    for name in spate.client.__all__:
        assert getattr(spate.client, name) is not None

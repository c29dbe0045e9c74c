"""The record layer stays pure: no I/O, clocks, randomness, asyncio or Spark."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import spate.records

PACKAGE_DIR = Path(spate.records.__file__).parent
MODULES = sorted(PACKAGE_DIR.glob("*.py"))

# Everything the record layer may import: data handling and codecs only.
ALLOWED = {
    "__future__",
    "dataclasses",
    "enum",
    "struct",
    "typing",
    "zlib",
    "cramjam",
    "crc32c",
    "lz4.frame",
}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_record_modules_import_only_data_and_codec_libraries(path):
    foreign = {
        name
        for name in imported_modules(path)
        if name not in ALLOWED and not name.startswith(("spate.records.", "spate.structs"))
    }
    assert foreign == set()


def test_the_public_api_is_importable_from_the_package():
    for name in spate.records.__all__:
        assert hasattr(spate.records, name), name

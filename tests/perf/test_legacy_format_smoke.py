"""The legacy-format benchmark (``python -m tests.perf.legacy_format_bench``) at a tiny size, so it keeps working.

Figures are not checked (they belong to the real run): every row is printed
and every record produced either way is read back either way.
"""

from __future__ import annotations

import re

import pytest

from tests.perf import legacy_format_bench

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_the_legacy_format_benchmark_prints_a_row_per_operation_and_codec(capsys) -> None:
    legacy_format_bench.main(["--records", "2000", "--rounds", "1", "--codecs", "none,gzip"])
    out = capsys.readouterr().out
    rows = re.findall(r"^\| (produce|consume), 100 B, (none|gzip) \| ([\d,]+) \| ([\d,]+) \|", out, re.M)
    assert [(operation, codec) for operation, codec, _, _ in rows] == [
        ("produce", "none"), ("consume", "none"), ("produce", "gzip"), ("consume", "gzip")]
    assert all(int(current.replace(",", "")) > 0 and int(legacy.replace(",", "")) > 0 for *_, current, legacy in rows)

"""The metric names a PromQL expression reads (enough PromQL for dashboards: selectors, functions,
aggregations with by/without, binary operators, ranges and Grafana's $variables)."""

from __future__ import annotations

import re

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_BRACES = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_IDENTIFIER = re.compile(r"(?<![\w$.])([A-Za-z_:][\w:]*)(\s*\()?")
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
            "offset", "inf", "nan"}


def metric_names(expr: str) -> set[str]:
    """Names of the series ``expr`` selects; function names and Grafana variables are not metrics."""
    text = _STRINGS.sub('""', expr)
    text = _BRACES.sub("", text)
    text = _RANGES.sub("", text)
    text = _GROUPING.sub("", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        name, call = match.group(1), match.group(2)
        if call or name.lower() in KEYWORDS:
            continue
        names.add(name)
    return names


def label_values_metric(query: str) -> str | None:
    """The metric of a Grafana ``label_values(metric, label)`` variable query."""
    match = re.fullmatch(r"\s*label_values\(\s*([A-Za-z_:][\w:]*)\s*(?:\{[^}]*\})?\s*,\s*\w+\s*\)\s*", query)
    return match.group(1) if match else None

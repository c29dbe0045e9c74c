"""Scraping a broker's /metrics as Prometheus does, and reading the samples."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

_SAMPLE_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
                    "summary": ("", "_sum", "_count")}


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


class Scrape:
    def __init__(self, text: str) -> None:
        self.text = text
        self.samples: list[Sample] = []
        self.families: set[str] = set()
        # Sample names each declared family has, even while it has no series yet (a counter of no topic).
        self.declared: set[str] = set()
        for family in text_string_to_metric_families(text):
            self.families.add(family.name)
            self.declared |= {family.name + suffix for suffix in _SAMPLE_SUFFIXES.get(family.type, ("",))}
            self.samples.extend(Sample(s.name, dict(s.labels), s.value) for s in family.samples)

    @property
    def names(self) -> set[str]:
        """Every sample name (``x_total``, ``x_bucket``, ...) exported or declared, and every family name."""
        return self.families | self.declared | {s.name for s in self.samples}

    def matching(self, name: str, **labels: str) -> list[Sample]:
        return [s for s in self.samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]

    def value(self, name: str, **labels: str) -> float | None:
        """The one sample with exactly these labels; None when there is none."""
        found = [s for s in self.samples if s.name == name and s.labels == labels]
        return found[0].value if found else None

    def sum(self, name: str, **labels: str) -> float:
        """The sum over every sample of ``name`` whose labels include ``labels``."""
        return sum(s.value for s in self.matching(name, **labels))


def scrape(url: str, timeout: float = 10.0) -> Scrape:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.status == 200
        return Scrape(response.read().decode())

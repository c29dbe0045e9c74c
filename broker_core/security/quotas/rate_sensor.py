"""Kafka's windowed rate (``SampledStat`` + ``Rate``) and the throttle time a violation earns.

The rate keeps ``quota.window.num`` samples of ``quota.window.size.seconds``
each, a new one started by the first record after the last one's time is
up; a sample as old as all of them together is dropped. The rate is the sum
of the live samples over the time since the oldest began, counted as at
least ``num - 1`` windows: a new client may spend that much at first
instead of being throttled on its first request, as in Kafka.

A value is recorded first and the quota checked after, as Kafka's sensor
does. A rate above the bound earns the time until the window is long enough
for what it holds (Kafka estimates it as ``(rate - bound) / bound * window``;
with the window's minimum length that estimate falls short while the window
is young, letting a busy client run about a fifth over its quota).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RateConfig:
    """``quota.window.num`` samples of ``quota.window.size.seconds``."""

    samples: int = 11
    window_s: float = 1.0

    def __post_init__(self) -> None:
        if self.samples < 1 or self.window_s <= 0:
            raise ValueError("quota.window.num and quota.window.size.seconds must be at least 1")


@dataclass
class _Sample:
    start: float
    value: float = 0.0


@dataclass
class WindowedRate:
    """Units recorded per second over the last ``samples`` windows."""

    config: RateConfig = field(default_factory=RateConfig)
    _samples: list[_Sample] = field(default_factory=list)

    def record(self, value: float, now: float) -> None:
        self._purge(now)
        current = self._samples[-1] if self._samples else None
        if current is None or now - current.start >= self.config.window_s:
            current = _Sample(now)
            self._samples.append(current)
        current.value += value

    def _purge(self, now: float) -> None:
        horizon = now - self.config.samples * self.config.window_s
        while self._samples and self._samples[0].start <= horizon:
            self._samples.pop(0)
        del self._samples[:max(0, len(self._samples) - self.config.samples)]

    def window_size(self, now: float) -> float:
        """Seconds the rate is taken over: since the oldest sample began, at least ``samples - 1`` windows."""
        self._purge(now)
        elapsed = now - self._samples[0].start if self._samples else 0.0
        return max(elapsed, (self.config.samples - 1) * self.config.window_s)

    def rate(self, now: float) -> float:
        window = self.window_size(now)
        return sum(s.value for s in self._samples) / window if window > 0 else 0.0

    def throttle_time_s(self, bound: float, now: float) -> float:
        """How long to hold the client back for the rate to come down to ``bound`` (0 within it).

        That is when the window, growing from its oldest sample, is long enough for what it holds;
        samples expiring meanwhile only make it sooner.
        """
        cap = self.config.samples * self.config.window_s
        if self.rate(now) <= bound:
            return 0.0
        if bound <= 0:
            return cap
        total = sum(s.value for s in self._samples)
        return min(max(0.0, self._samples[0].start + total / bound - now), cap)

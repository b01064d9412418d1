"""Reconnect delays: exponential (0.5 s doubling to 30 s) with "equal jitter" (half fixed, half random), so a fleet
of backends does not reconnect in step. The same function as the Node SDK's ``sdk/src/backoff.ts``."""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Generator


def backoff_delay(
    attempt: int,
    *,
    initial: float = 0.5,
    maximum: float = 30.0,
    random: Callable[[], float] = _random.random,
) -> float:
    """Seconds to wait before reconnect attempt number ``attempt`` (0 for the first)."""
    ceiling: float = min(maximum, initial * float(2 ** min(attempt, 30)))
    return ceiling / 2 + float(random()) * ceiling / 2


def backoff_delays(
    *, initial: float = 0.5, maximum: float = 30.0, random: Callable[[], float] = _random.random
) -> Generator[float, None, None]:
    """The delays of one series of failed attempts, endless (the shape websockets' ``reconnect_delays`` takes)."""
    attempt = 0
    while True:
        yield backoff_delay(attempt, initial=initial, maximum=maximum, random=random)
        attempt += 1

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

import parley
from parley_server import SECRET, ParleyServer, running_server
from widget import Widget

_ids = itertools.count(1)


@pytest.fixture(scope="session")
def server() -> Iterator[ParleyServer]:
    """One real Parley for the tests that do not restart it (each uses its own customers and tool names)."""
    with running_server("parley-py-") as s:
        yield s


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Unique names per test: customers and tools never collide on the shared server."""
    return lambda prefix: f"{prefix}{next(_ids)}"


@pytest.fixture
async def clients() -> AsyncIterator[list[parley.Client]]:
    """Clients a test made; closed after it (so its tools leave Parley's catalogue)."""
    made: list[parley.Client] = []
    yield made
    for client in made:
        await client.close()


@pytest.fixture
async def widgets() -> AsyncIterator[list[Widget]]:
    made: list[Widget] = []
    yield made
    for widget in made:
        await widget.close()


__all__ = ["SECRET"]

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pipeline.stack import Redis, Worker


@pytest.fixture(scope="module")
def redis_server() -> Iterator[Redis]:
    server = Redis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def worker(redis_server: Redis) -> Iterator[Worker]:
    w = Worker()
    w.start()
    yield w
    w.stop()

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


# The lifecycle tests (test_submitting, test_queue, test_grading, test_heartbeat).


@pytest.fixture
def user():  # type: ignore[no-untyped-def]
    from tests.factories import student_create

    return student_create(username="bob", password="pw-bob-12345")


@pytest.fixture
def exercise():  # type: ignore[no-untyped-def]
    from grader.models import Exercise

    return Exercise.objects.get(slug="scaled-dot-product-attention")


@pytest.fixture
def no_publish(monkeypatch):  # type: ignore[no-untyped-def]
    """Record what the services would publish, instead of reaching for a broker."""
    from grader.services import grading, queue

    sent: list[int] = []

    def enqueue(*, submission_id: int, countdown: float | None = None) -> bool:
        sent.append(submission_id)
        return True

    monkeypatch.setattr(queue, "submission_enqueue", enqueue)
    monkeypatch.setattr(grading, "submission_enqueue", enqueue)
    return sent

"""Publishing never blocks its caller for long, whatever state the broker is in."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest
from celery import current_app
from django.conf import settings

from grader.publish import GRADE_SUBMISSION, SWEEP_SUBMISSIONS, SWEEPER_QUEUE, task_publish

# The acceptance bound for a submit request while Redis is down (300 ms); publishing is
# bounded at GRADER_PUBLISH_TIMEOUT_SECONDS (100 ms), so this leaves 3x headroom for a loaded
# machine. Before the fix a publish took 5-6 s here.
REQUEST_BOUND_SECONDS = 0.3


@pytest.fixture
def broker_url() -> Iterator[Callable[[str], None]]:
    conf = current_app.conf
    original = conf.get("broker_write_url")

    def point_at(url: str) -> None:
        conf.update(broker_write_url=url)

    yield point_at
    conf.update(broker_write_url=original)


@pytest.fixture
def refusing_port() -> int:
    with socket.socket() as s:  # bound, then closed: connecting is refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) but never answers: a hung Redis."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield s.getsockname()[1]


@pytest.mark.parametrize("broker", ["refusing_port", "black_hole"])
def test_publishing_to_a_dead_or_hung_broker_gives_up_quickly(
    broker: str, broker_url, request: pytest.FixtureRequest
) -> None:  # type: ignore[no-untyped-def]
    broker_url(f"redis://127.0.0.1:{request.getfixturevalue(broker)}/0")
    for _ in range(3):  # and again: nothing retries in the background either
        started = time.monotonic()
        assert task_publish(name=GRADE_SUBMISSION, args=(1,)) is False
        assert time.monotonic() - started < REQUEST_BOUND_SECONDS


def test_the_publish_bound_is_a_setting_of_about_100_ms() -> None:
    assert settings.GRADER_PUBLISH_TIMEOUT_SECONDS == 0.1


def test_sweeps_go_to_their_own_queue_and_expire_within_one_interval() -> None:
    import grader.tasks  # noqa: F401  (registers the tasks)

    assert SWEEP_SUBMISSIONS in current_app.tasks
    route = current_app.amqp.router.route({}, SWEEP_SUBMISSIONS)
    assert route["queue"].name == SWEEPER_QUEUE
    assert route["queue"].name != current_app.amqp.router.route({}, GRADE_SUBMISSION)["queue"].name
    (entry,) = (e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == SWEEP_SUBMISSIONS)
    assert entry["options"]["queue"] == SWEEPER_QUEUE
    assert 0 < entry["options"]["expires"] <= entry["schedule"]
    # A plain `celery worker` consumes the sweeper's queue too.
    assert SWEEPER_QUEUE in {q.name for q in current_app.amqp.queues.values()}


def test_a_publish_reuses_its_connection_and_survives_a_broker_restart(redis_server) -> None:  # type: ignore[no-untyped-def]
    import redis

    from grader import publish
    from tests.pipeline.stack import REDIS_URL

    client = redis.Redis.from_url(REDIS_URL)
    client.flushall()
    assert task_publish(name=GRADE_SUBMISSION, args=(1,))
    first = publish._local.held[1]
    assert task_publish(name=GRADE_SUBMISSION, args=(2,))
    assert publish._local.held[1] is first  # no new connection per message

    redis_server.restart()  # the held connection's socket is now dead
    assert task_publish(name=GRADE_SUBMISSION, args=(3,))  # at once, not by the sweeper
    assert client.llen("celery") == 1  # the message published after the restart


def test_a_stale_connection_is_dropped_and_the_message_sent_on_a_fresh_one(
    redis_server, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import redis

    from grader import publish
    from tests.pipeline.stack import REDIS_URL

    client = redis.Redis.from_url(REDIS_URL)
    client.flushall()
    assert task_publish(name=GRADE_SUBMISSION, args=(1,))
    stale = publish._local.held[1]  # the connection, held with its producer
    sent = current_app.send_task

    def fails_on_the_stale_one(*args, producer, **kwargs):  # type: ignore[no-untyped-def]
        if producer.connection is stale:
            raise ConnectionError("the broker restarted")
        return sent(*args, producer=producer, **kwargs)

    monkeypatch.setattr(current_app, "send_task", fails_on_the_stale_one)
    assert task_publish(name=GRADE_SUBMISSION, args=(2,))
    assert publish._local.held[1] is not stale
    assert publish._local.held[2].connection is publish._local.held[1]
    assert client.llen("celery") == 2

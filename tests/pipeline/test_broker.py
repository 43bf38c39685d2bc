"""common.broker: kombu's Redis transport with one client per pool, on a real Redis."""

from __future__ import annotations

from celery import current_app
from django.conf import settings

from common.broker import Channel, Transport
from tests.pipeline.stack import Redis


def test_celery_uses_it_for_the_redis_broker(redis_server: Redis) -> None:
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    with current_app.connection_for_write() as conn:
        assert isinstance(conn.transport, Transport)
        assert isinstance(conn.default_channel, Channel)


def test_one_client_per_pool_and_a_new_one_after_a_reconnect(redis_server: Redis) -> None:
    with current_app.connection_for_write() as conn:
        channel = conn.default_channel
        with channel.conn_or_acquire() as first, channel.conn_or_acquire() as second:
            assert first is second
            assert first.ping()
        channel._disconnect_pools()  # what kombu does when the connection drops
        with channel.conn_or_acquire() as third:
            assert third is not first
            assert third.connection_pool is channel.pool
            assert third.ping()
        # The event loop's own client is kombu's, apart from the one for commands.
        assert channel.client is not third


def test_messages_go_through(redis_server: Redis) -> None:
    with current_app.connection_for_write() as conn:
        simple = conn.SimpleQueue("broker-test")
        for n in range(3):
            simple.put({"id": n})
        got = [simple.get(timeout=2) for _ in range(3)]
        for message in got:
            message.ack()
        assert [m.payload for m in got] == [{"id": 0}, {"id": 1}, {"id": 2}]
        simple.close()

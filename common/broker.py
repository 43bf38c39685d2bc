"""The Redis transport of Celery and kombu, with one client per connection pool.

kombu's Redis channel builds a new ``redis.Redis`` for every command it sends outside the
event loop (``Channel.conn_or_acquire``): each publish, and each message's two bookkeeping
writes in the worker (the unacked entry at delivery, its removal at the ack). A client holds
no connection of its own, only its pool and its table of response callbacks, whose build is
what it costs: a noticeable share of what kombu spends on a message in the worker's main
process (docs/performance.md). settings.CELERY_BROKER_TRANSPORT names this class.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _sync_client: tuple[Any, Any] | None = None  # (the pool it was built on, the client)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # the event loop's client: kombu keeps it (``client``), and its state
            return super()._create_client(asynchronous=True)
        pool = self.pool
        held = self._sync_client
        # A reconnect replaces the pool (``_disconnect_pools``): then build anew on the new one.
        if held is None or held[0] is not pool:
            held = self._sync_client = (pool, self.Client(connection_pool=pool))
        return held[1]


class Transport(kombu_redis.Transport):
    Channel = Channel

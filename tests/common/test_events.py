"""common.events: a signal sent once the transaction commits, and never at all when it rolls
back; a receiver that raises is logged and neither stops the others nor reaches the sender."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import transaction
from django.dispatch import Signal

from common.events import event_send_on_commit

pytestmark = pytest.mark.django_db(transaction=True)


class Row:
    pass


def test_sent_after_the_commit_only() -> None:
    signal = Signal()
    heard: list[dict[str, Any]] = []

    def listen(sender: Any, **ids: Any) -> None:
        heard.append({k: v for k, v in ids.items() if k != "signal"})

    signal.connect(listen, weak=False)
    with transaction.atomic():
        event_send_on_commit(signal=signal, sender=Row, row_id=7)
        assert heard == []
    assert heard == [{"row_id": 7}]


def test_never_sent_when_rolled_back() -> None:
    signal = Signal()
    heard: list[int] = []
    signal.connect(lambda sender, **ids: heard.append(ids["row_id"]), weak=False)
    with pytest.raises(RuntimeError), transaction.atomic():
        event_send_on_commit(signal=signal, sender=Row, row_id=7)
        raise RuntimeError("rolled back")
    assert heard == []


def test_a_failing_receiver_is_logged_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = Signal()
    heard: list[int] = []

    def broken(sender: Any, **ids: Any) -> None:
        raise ValueError("the platform is down")

    signal.connect(broken, weak=False)
    signal.connect(lambda sender, **ids: heard.append(ids["row_id"]), weak=False)
    with caplog.at_level(logging.ERROR, logger="django.dispatch"):
        event_send_on_commit(signal=signal, sender=Row, row_id=7)  # no transaction: at once
    assert heard == [7]
    [record] = caplog.records
    assert "the platform is down" in record.getMessage() and record.exc_info is not None

"""common.fields: LongTextField refuses what DRF's CharField refuses, with its messages."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from common.fields import LongTextField

TEXTS = [
    "def f(q, k, v):\n    return q\n",
    "plain ascii",
    "ünïcödé — √d_k, 🙂 outside the BMP",
    "a lone surrogate \ud83d in the middle",
    "\udfff at the start",
    "at the end \ud800",
    "two \ud800 and \udbff",
    "a NUL \x00 inside",
    "   ",
    "",
    "x" * 70_000,
    "y" * 70_000 + "\udc00",
]


def _errors(field: serializers.Field, text: str) -> list[tuple[str, str]] | None:
    try:
        field.run_validation(text)
    except serializers.ValidationError as e:
        return [(str(d), d.code) for d in e.detail]
    return None


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("kwargs", [{}, {"max_length": 65_536, "trim_whitespace": False}])
def test_the_same_verdict_and_message_as_drfs_char_field(text: str, kwargs: dict) -> None:
    assert _errors(LongTextField(**kwargs), text) == _errors(serializers.CharField(**kwargs), text)


def test_a_surrogate_is_named_by_its_code_point() -> None:
    assert _errors(LongTextField(), "ok \udabc") == [
        ("Surrogate characters are not allowed: U+DABC.", "surrogate_characters_not_allowed")
    ]

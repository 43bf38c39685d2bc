"""API fields shared by the apps."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

_SURROGATE = re.compile("[\ud800-\udfff]")


class _NoSurrogates(ProhibitSurrogateCharactersValidator):
    """DRF's check, its message and code, as one regex search. DRF's walks the text in a
    Python generator, a character at a time: a third of a millisecond of every submit, whose
    code can be 64 KB."""

    def __call__(self, value: Any) -> None:
        found = _SURROGATE.search(str(value))
        if found:
            super().__call__(found.group())


class LongTextField(serializers.CharField):
    """A CharField for long texts (code, answers): the same rules, checked faster."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            _NoSurrogates() if type(v) is ProhibitSurrogateCharactersValidator else v
            for v in self.validators
        ]

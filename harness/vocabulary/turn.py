"""One turn of a conversation: who said it and exactly what, the one record every layer reads a conversation as (the
page's history, the app's API, the generated sessions' model). It imports nothing of the suite, so that the page
objects may use it too."""

from __future__ import annotations

from typing import NamedTuple


class Turn(NamedTuple):
    role: str  # "user" or "assistant"
    text: str  # exactly as typed or answered

"""What of another user's data an app's API gives away: their texts found in the answers to every read a user's API
offers of that user's data (UserSession.reads_of), by what was asked."""

from __future__ import annotations

import json

from harness.drivers.base import ApiAnswer

THEIRS_ALONE = 12  # characters: a text this long is one user's own, not a word anyone may hold


def leaks(answers: dict[str, ApiAnswer], theirs: set[str]) -> list[str]:
    """What of another user's texts (THEIRS_ALONE characters or more) shows in any answer, by what was asked."""
    texts = [t for t in theirs if len(t) >= THEIRS_ALONE]
    return [f"{asked}: {text[:60]!r}" for asked, answer in answers.items() for text in texts
            if text in answer.body or json.dumps(text)[1:-1] in answer.body]

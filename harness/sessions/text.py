"""Text the way users type it: values and small talk that mix the character classes the memory contract promises to
keep byte for byte (quotes, backslashes, newlines, emoji, CJK, right-to-left, HTML-like text).

Every value stays one sentence of one line, never ending in punctuation: a fact's value is what follows "is" up to the
final full stop, so a value like "Dr. Who" would be two sentences to any assistant. Newlines go between sentences.
Markdown's emphasis and code characters are left out, since apps may render replies as Markdown.
"""

from __future__ import annotations

import re

from faker import Faker

VALUE_CLASSES = ("plain", "quotes", "backslash", "emoji", "cjk", "rtl", "html")
CHAT_CLASSES = (*VALUE_CLASSES, "newline")

_PERSONAL = re.compile(r"\b(?:my|our|your|what|which|where|who|when|remember|tell)\b", re.IGNORECASE)
_EMOJI = ("🐕", "🎉", "🚲", "☕", "👍🏽", "👩‍💻", "🇵🇹", "🌮")
_CJK = ("東京", "山田太郎", "서울", "かばん", "北京烤鸭", "さくら 3号", "김민준")
_RTL = ("שלום", "مرحبا", "ליאור 7", "دبي مارينا", "תל אביב")
_HTML = ("<b>{w}</b> & co", "<i>{w}</i>", "a < b > {w}", "<span class=\"x\">{w}</span>")


class TextMaker:
    """Values and small talk of one character class each, from a seeded faker."""

    def __init__(self, fake: Faker) -> None:
        self.fake = fake
        self.unseen: list[str] = []  # classes not drawn yet: they come first

    def next_class(self, allowed: tuple[str, ...]) -> str:
        """A class for the next text: one not drawn yet if any is allowed here, else any."""
        fresh = [c for c in self.unseen if c in allowed]
        chosen = fresh[0] if fresh else self.fake.random_element(allowed)
        if chosen in self.unseen:
            self.unseen.remove(chosen)
        return chosen

    def _word(self) -> str:
        return self.fake.word().capitalize()

    def value(self, kind: str) -> str:
        f = self.fake
        if kind == "plain":
            return f.random_element([f.city(), f.last_name(), f"{self._word()}-{f.random_int(10, 999)}"])
        if kind == "quotes":
            return f.random_element([f'"{self._word()}" {f.last_name()}', f"O'{self._word()}",
                                     f"“{self._word()}” {f.random_int(1, 99)}", f"it's {f.word()}'s"])
        if kind == "backslash":
            return f.random_element([f"C:\\Users\\{f.first_name().lower()}\\{f.word()}",
                                     f"{f.word()}\\n{f.word()}"])
        if kind == "emoji":
            return f"{f.random_element(_EMOJI)} {self._word()} {f.random_element(_EMOJI)}"
        if kind == "cjk":
            return f"{f.random_element(_CJK)} {f.random_int(1, 99)}"
        if kind == "rtl":
            return f"{f.random_element(_RTL)} {self._word()}"
        if kind == "html":
            return f.random_element(_HTML).format(w=self._word())
        raise ValueError(f"unknown character class {kind!r}; known: {', '.join(CHAT_CLASSES)}")

    def _plain_sentence(self, words: int) -> str:
        """A sentence that no assistant could read as a fact about the user or a question."""
        while True:
            sentence = self.fake.sentence(nb_words=words)
            if not _PERSONAL.search(sentence):
                return sentence

    def small_talk(self, kind: str) -> str:
        """A turn that states no fact and asks nothing, with a piece of the class in it."""
        sentence = self._plain_sentence(6)
        if kind == "newline":
            return f"{sentence}\n{self._plain_sentence(4)}\n\n{self._plain_sentence(3)}"
        return f"{sentence[:-1]}: {self.value(kind)}."

"""Text the way users type it: values of the shapes real values take (addresses, decimals, times, dates, URLs, units,
fractions, names with punctuation, long values, common words, ...) in the character classes the memory contract
promises to keep code point for code point (quotes, backslashes, newlines, emoji, CJK, right-to-left, HTML-like
text, combining marks), and small talk, up to the longest message an app accepts.

The language every shipped assistant speaks (and the deterministic model server): a sentence ends at whitespace after
".", "!" or "?"; a fact is "my <key> is <value>" with the value running to the sentence's end, less its final "." or
"!". So a value holds any character but never a line break, never ".", "!" or "?" followed by whitespace (that would
be two sentences to any assistant: "Dr. Who"), and never ends in ".", "!" or "?". Markdown's emphasis and code
characters are left out, since apps may render replies as Markdown.
"""

from __future__ import annotations

import datetime
import re

from faker import Faker

# Fixed bounds, not Faker's "-30y".."+5y" (counted from today): a seed draws the same dates, and so the same session
# and plan digest, on any day it is run; a seed found by exploration reproduces the week after.
_DATES_FROM, _DATES_TO = datetime.date(1996, 1, 1), datetime.date(2031, 12, 31)

# What every value is written in, one class each (the snapshot generator draws from these only).
CHARACTER_CLASSES = ("plain", "quotes", "backslash", "emoji", "cjk", "rtl", "html")
# The shapes real values take.
VALUE_SHAPES = ("address", "decimal", "time", "date", "url", "unit", "fraction", "name with punctuation", "long",
                "common word", "email", "money", "phone", "code", "combining marks")
VALUE_CLASSES = (*CHARACTER_CLASSES, *VALUE_SHAPES)
CHAT_CLASSES = (*CHARACTER_CLASSES, "newline")
SCRIPTS = ("latin", "cjk", "emoji", "rtl")  # of messages near the longest an app accepts

_PERSONAL = re.compile(r"\b(?:my|our|your|what|which|where|who|when|remember|tell)\b", re.IGNORECASE)
_EMOJI = ("🐕", "🎉", "🚲", "☕", "👍🏽", "👩‍💻", "🇵🇹", "🌮")
_CJK = ("東京", "山田太郎", "서울", "かばん", "北京烤鸭", "さくら 3号", "김민준")
_RTL = ("שלום", "مرحبا", "ליאור 7", "دبي مارينا", "תל אביב")
_HTML = ("<b>{w}</b> & co", "<i>{w}</i>", "a < b > {w}", "<span class=\"x\">{w}</span>")
# Values that are common words (none only of words search ignores: a memory must have something to be found by).
_COMMON_WORDS = ("yes", "no", "none", "nothing", "the same", "my dog", "maybe later", "who knows", "tomorrow", "here")
_UNITS = ("kg", "km", "mg", "°C", "ml", "MB", "cm", "mph", "µm", "ft")
# Combining marks: decomposed letters (NFD) that must not come back composed.
_COMBINING = ("Jose\u0301", "Mu\u0303noz", "Zoe\u0308", "Ange\u0300le", "Nguye\u0302\u0303n")
# A long message's filler, per script, without sentence ends, questions or facts.
_FILLER = {"latin": "lorem ipsum dolor sit amet consectetur ", "cjk": "東京の春は桜がきれいです",
           "emoji": "🌮🎉👩‍💻🇵🇹", "rtl": "שלום עולם مرحبا بالعالم "}


class TextMaker:
    """Values and small talk of one class each, from a seeded faker."""

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
        return self._shaped(kind)

    def _shaped(self, kind: str) -> str:
        f = self.fake
        if kind == "address":
            return f.random_element([f"{f.building_number()} {f.street_name()}, {f.city()}",
                                     f"Apt {f.random_int(1, 40)}B, {f.building_number()} {f.street_name()}",
                                     f"{f.street_address()}, {f.postcode()} {f.city()}"]).replace(". ", " ")
        if kind == "decimal":
            return f.random_element([f"{f.random_int(0, 99)}.{f.random_int(0, 999):03d}", f"-{f.random_int(1, 9)}.5",
                                     f"{f.random_int(1, 9)},{f.random_int(10, 99)}", "0.0001"])
        if kind == "time":
            return f.random_element([f"{f.random_int(0, 23):02d}:{f.random_int(0, 59):02d}",
                                     f"{f.random_int(1, 12)}:{f.random_int(0, 59):02d} pm", "7:40",
                                     f"{f.random_int(0, 23):02d}:{f.random_int(0, 59):02d}:{f.random_int(0, 59):02d}"])
        if kind == "date":
            when = f.date_between(_DATES_FROM, _DATES_TO)
            return f.random_element([when.isoformat(), when.strftime("%d/%m/%Y"), when.strftime("%B %-d, %Y"),
                                     when.strftime("%-d %b %Y")])
        if kind == "url":
            return f.random_element([f"https://{f.domain_name()}/{f.uri_path()}?q={f.word()}&n={f.random_int()}",
                                     f"http://{f.ipv4()}:{f.random_int(1024, 65535)}/", f"www.{f.domain_name()}",
                                     f"ftp://files.{f.domain_name()}/a-b_c.tar.gz#top"])
        if kind == "unit":
            return f"{f.random_int(1, 999)} {f.random_element(_UNITS)}"
        if kind == "fraction":
            return f.random_element([f"{f.random_int(1, 9)}/{f.random_int(2, 16)}", "½ a cup", "3 ¾", "1/3 of it"])
        if kind == "name with punctuation":
            return f.random_element([f"{f.first_name()} O'{self._word()}-{f.last_name()}", f"Dr {f.last_name()}, PhD",
                                     f"{f.last_name()}, {f.first_name()} (née {f.last_name()})",
                                     f"St-{f.city()} & Sons", f"{f.first_name()} “{self._word()}” {f.last_name()}"])
        if kind == "long":
            return " ".join(self._word() for _ in range(f.random_int(40, 90)))
        if kind == "common word":
            return f.random_element(_COMMON_WORDS)
        if kind == "email":
            return f.random_element([f.email(), f"{f.user_name()}+{f.word()}@{f.domain_name()}",
                                     f"{f.first_name()}.{f.last_name()}@mail.{f.domain_name()}"])
        if kind == "money":
            return f.random_element([f"${f.random_int(1, 9999)}.{f.random_int(0, 99):02d}",
                                     f"€{f.random_int(1, 999)},{f.random_int(0, 99):02d}", f"£{f.random_int(1, 99)}",
                                     f"{f.random_int(1, 999)} USD", f"¥{f.random_int(100, 99999)}"])
        if kind == "phone":
            return f.random_element([f.phone_number(), f"+44 {f.random_int(1000, 9999)} {f.random_int(100000, 999999)}",
                                     f"({f.random_int(100, 999)}) {f.random_int(100, 999)}-{f.random_int(1000, 9999)}"])
        if kind == "code":
            return f.random_element([f"{f.bothify('??-####-??').upper()}", f.uuid4(), f"{f.random_int(0, 9999):04d}",
                                     f"v{f.random_int(0, 9)}.{f.random_int(0, 20)}.{f.random_int(0, 99)}",
                                     f"#{f.hexify('^^^^^^')}"])
        if kind == "combining marks":
            return f"{f.random_element(_COMBINING)} {f.random_element(_COMBINING)}"
        raise ValueError(f"unknown value class {kind!r}; known: {', '.join(VALUE_CLASSES)}")

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

    def near_limit(self, script: str, length: int) -> str:
        """Small talk of exactly `length` code points, in one script: a message at the longest an app accepts."""
        lead = self._plain_sentence(4)[:-1] + ": "
        filler = _FILLER[script]
        body = (filler * (length // len(filler) + 2))[:max(0, length - len(lead) - 1)]
        text = f"{lead}{body.strip()}"
        return (text + "x" * length)[:length - 1] + "."

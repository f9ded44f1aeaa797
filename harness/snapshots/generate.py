"""Generated histories at scale (format 2): what a team's memory store looks like after years, from a fixed seed.

- Thousands of owners, from one memory to thousands: one large owner (1/33 of the history, at most 3,000), the rest
  log-uniform from 1 to 120 (about 4,000 owners in 100k memories); owner ids collide nearly on purpose (`ana`,
  `ana1`, `ana-1`, `ana_1`, `ana.1`).
- Each owner talks mostly about four topics of their own (clustered), as people do.
- Texts users type: plain, quotes, backslashes, newlines, emoji, CJK, right-to-left, HTML-like, very long; exact and
  near repeats (same words, other case and punctuation) of the owner's earlier texts and of other owners'; and texts
  with no content words (";)", "Where is it?", CJK only), which a word-hashing embedder gives no vector.
- Creation times as a legacy store holds them (harness/snapshots/legacy_times.py): "Z", explicit offsets, and naive
  local times in the store's zone (the header's `legacy_timezone`), some in the hour a daylight-saving change skips
  or repeats; each memory's `created_at` is the UTC time that means, to the microsecond.
- Probes: questions about an owner's topics, paraphrases of their memories, questions about nothing they said, and
  questions without content words; expected results by exact cosine over the owner's vectors from the app's own
  embedder, independently of any index, ties by id. A memory without a vector is never a hit, and never a crash.

The history holds `nominal + 3` memories (100,003 for 100k), so that every batch size leaves a partial batch.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from faker import Faker

from harness.app.app_tools import STREAM_BLOCK, embed_texts_f32, stream_embed_f32
from harness.app.target import Target
from harness.sessions.text import CHARACTER_CLASSES, TextMaker
from harness.snapshots.expectations import exact_ranking, owner_matrix
from harness.snapshots.format2 import GoldenProbe, Header, HistoricalMemory
from harness.snapshots.legacy_times import LegacyClock
from harness.vocabulary.recall import Hit

EXTRA = 3  # memories beyond the nominal size: a partial last batch at every batch size
TOPICS = ("order number", "locker code", "gate code", "dentist", "plumber", "gym class", "book club", "favourite tea",
          "bike shop", "tax advisor", "car plate", "library card", "wifi password", "piano teacher", "vet",
          "bank branch", "passport number", "seat preference", "home city", "sister's birthday", "dog", "nickname",
          "train to work", "parking spot", "insurance number", "favourite colour", "employer", "anniversary")
NO_CONTENT = (";)", "Where is it?", "Ok!", "🙂🙂", "…", "?!", "It is what it is.", "東京", "שלום", "And then?")
_TEMPLATES = ("My {key} is {value}.", "Note to self: my {key} is {value}.", "Remember that my {key} is {value}.",
              "Actually, my {key} is {value}.", "{chat} My {key} is {value}.", "My {key}? It is {value}.")
_SUFFIXES = ("1", "-1", "_1", ".1", "2")
_EPOCH = datetime(2023, 1, 1, tzinfo=UTC)
_DAYS = 700  # the history's memories were told over this many days from _EPOCH (four daylight-saving changes)


@dataclass
class History:
    header: Header
    memories: list[HistoricalMemory] | Iterator[HistoricalMemory]  # an iterator, read once, from stream_history
    probes: list[GoldenProbe]


class _Pools:
    """Words and names drawn once from the seeded faker: sampling them keeps 100k texts fast and still faker's."""

    def __init__(self, fake: Faker) -> None:
        self.words = [w.capitalize() for w in fake.words(nb=3000)]
        self.cities = [fake.city() for _ in range(600)]
        self.names = [fake.last_name() for _ in range(600)]
        self.first = [fake.first_name().lower() for _ in range(1200)]
        self.sentences = [fake.sentence(nb_words=8) for _ in range(400)]


MAX_DRAWS = 200  # draws that all collide before an owner id gets its number: the names give about 39,000 ids


def _owner_ids(rng: random.Random, pools: _Pools, count: int) -> list[str]:
    """Owner ids, a fifth of them near-collisions of another (`ana`, `ana1`, `ana-1`...). Past what the names give
    (about 39,000 ids, near a million memories), an id that keeps colliding gets a number no draw makes (`ana.40001`):
    before, the loop never ended there."""
    ids: list[str] = []
    seen: set[str] = set()
    collided = 0
    while len(ids) < count:
        if ids and rng.random() < 0.2:
            candidate = rng.choice(ids).split("-")[0].split("_")[0].split(".")[0].rstrip("0123456789")
            candidate += rng.choice(_SUFFIXES)
        else:
            candidate = rng.choice(pools.first) + (str(rng.randrange(100)) if rng.random() < 0.3 else "")
        candidate = "".join(ch for ch in candidate if ch.isascii() and (ch.isalnum() or ch in "._-")) or "owner"
        if candidate in seen and collided >= MAX_DRAWS:
            candidate = f"{candidate}.{len(ids) + 1}"  # drawn numbers stop at 99 and suffixes at ".1"
        if candidate not in seen:
            seen.add(candidate)
            ids.append(candidate)
            collided = 0
        else:
            collided += 1
    return ids


def memory_ids(count: int) -> list[str]:
    """`h000000`, `h000001`...: six digits up to a million memories, as many as the count needs past it, so that
    the ids of one history sort as their numbers do."""
    width = max(6, len(str(count - 1)))
    return [f"h{i:0{width}d}" for i in range(count)]


def _owner_sizes(rng: random.Random, total: int) -> list[int]:
    biggest = max(1, min(3000, total // 33))
    sizes, left = [biggest], total - biggest
    top = max(2, min(120, total // 10))
    while left > 0:
        size = min(left, max(1, int(math.exp(rng.uniform(0, math.log(top))))))
        sizes.append(size)
        left -= size
    return sizes


class _Texts:
    def __init__(self, rng: random.Random, fake: Faker, pools: _Pools) -> None:
        self.rng, self.pools, self.maker = rng, pools, TextMaker(fake)

    def value(self) -> str:
        rng, p = self.rng, self.pools
        if rng.random() < 0.12:
            return self.maker.value(rng.choice(CHARACTER_CLASSES))
        return rng.choice([f"{rng.choice(p.words)}-{rng.randrange(10, 9999)}", rng.choice(p.cities),
                           f"{rng.choice(p.words)} {rng.choice(p.names)}", str(rng.randrange(1000, 99999))])

    def fact(self, key: str) -> str:
        rng = self.rng
        text = rng.choice(_TEMPLATES).format(key=key, value=self.value(), chat=rng.choice(self.pools.sentences))
        roll = rng.random()
        if roll < 0.02:
            text = f"{text}\n{rng.choice(self.pools.sentences)}\n\n{rng.choice(self.pools.sentences)}"
        elif roll < 0.022:  # very long: a pasted note of 1 to 3 kB
            text = " ".join(rng.choice(self.pools.sentences) for _ in range(rng.randrange(15, 45))) + " " + text
        return text


def _near_repeat(rng: random.Random, text: str) -> str:
    """The same words in another case and punctuation ("Take care, bye!" and "take care bye")."""
    changed = text.lower() if rng.random() < 0.5 else text.upper()
    return changed.replace(".", "!") if "." in changed else changed + "!"


def _memories(rng: random.Random, fake: Faker, nominal: int) -> list[tuple[str, str, str | None]]:
    """(owner, text, conversation) for every memory, in the order they were told."""
    pools = _Pools(fake)
    texts = _Texts(rng, fake, pools)
    total = nominal + EXTRA
    sizes = _owner_sizes(rng, total)
    owners = _owner_ids(rng, pools, len(sizes))
    rows: list[tuple[str, str, str | None]] = []
    said: list[str] = []
    for owner, size in zip(owners, sizes, strict=True):
        topics = rng.sample(TOPICS, 4)
        own: list[str] = []
        conversations = max(1, size // 8)
        for _ in range(size):
            roll = rng.random()
            if roll < 0.005:
                text = rng.choice(NO_CONTENT)
            elif roll < 0.015 and own:
                text = rng.choice(own)  # told again, word for word
            elif roll < 0.025 and own:
                text = _near_repeat(rng, rng.choice(own))
            elif roll < 0.035 and said:
                text = rng.choice(said)  # the same words as another owner
            else:
                text = texts.fact(rng.choice(topics) if rng.random() < 0.8 else rng.choice(TOPICS))
            own.append(text)
            conversation = f"c-{owner}-{rng.randrange(conversations)}" if rng.random() < 0.8 else None
            rows.append((owner, text, conversation))
        said.extend(rng.sample(own, min(3, len(own))))
    rng.shuffle(rows)  # owners' histories interleave in time, as in a real store
    return rows


def _questions(rng: random.Random, by_owner: dict[str, list[int]], texts: list[str], count: int,
               ) -> list[tuple[str, str, list[int]]]:
    """(owner, question, evidence) from up to 50 owners (each signs in to ask): the largest, some with one memory,
    the rest at random."""
    owners = sorted(by_owner, key=lambda o: -len(by_owner[o]))
    singles = [o for o in owners if len(by_owner[o]) == 1][:5]
    chosen = list(dict.fromkeys([owners[0], *singles, *rng.sample(owners, min(len(owners), 50))]))[:50]
    out = []
    for n in range(count):
        owner = chosen[n % len(chosen)]
        mine = by_owner[owner]
        roll = rng.random()
        if roll < 0.5:
            key = next((t for t in TOPICS if t in texts[rng.choice(mine)]), rng.choice(TOPICS))
            out.append((owner, f"What is my {key}?", [i for i in mine if f"my {key} " in texts[i]]))
        elif roll < 0.8:
            i = rng.choice(mine)
            words = texts[i].split()
            out.append((owner, " ".join(words[1:9]) or texts[i], [i]))
        elif roll < 0.95:
            out.append((owner, f"Which {rng.choice(TOPICS)} did I mention?", []))
        else:
            out.append((owner, rng.choice(NO_CONTENT), []))
    return out


PROGRESS_EVERY = 50_000  # memories written between two progress lines


def question_count(nominal: int) -> int:
    """The golden questions a history of `nominal` memories gets: one per 50 memories, from 40 to 1,000."""
    return max(40, min(1000, nominal // 50))


def stream_history(target: Target, *, nominal: int, seed: int, embedders: list[str], threshold: float, k: int,
                   progress: Callable[[str], None] = lambda _: None, chunk: int = STREAM_BLOCK,
                   probe_count: int | None = None) -> History:
    """`nominal + 3` memories and their probes (`probe_count` of them, default question_count), with vectors from the
    target's own `embed` tool; the memories an iterator, embedded as they are read (blocks of `chunk` texts, on every
    core), so that a million never sit in memory at once.

    The probes come first: only the asked owners' memories (at most 50 owners) are embedded for their exact
    expectations; every memory is embedded again, in order, as the history is streamed. Same seed, same history,
    byte for byte, whatever the chunk."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    rows = _memories(rng, fake, nominal)
    texts = [text for _, text, _ in rows]
    legacy = embedders[0]
    by_owner: dict[str, list[int]] = defaultdict(list)
    for i, (owner, _, _) in enumerate(rows):
        by_owner[owner].append(i)
    ids = memory_ids(len(rows))
    questions = _questions(rng, by_owner, texts, probe_count or question_count(nominal))
    asked = sorted({owner for owner, _, _ in questions})
    needed = [i for o in asked for i in by_owner[o]]  # the asked owners' memories: all an expectation reads
    query_vectors = embed_texts_f32(target, [q for _, q, _ in questions], legacy)
    if threshold <= -1.0:
        # An app without a threshold answers every question with its k nearest; to a question with nothing to embed
        # (";)") it gives k memories of no similarity, in an order no model defines: there is no answer to expect.
        kept = [(question, vec) for question, vec in zip(questions, query_vectors, strict=True) if vec is not None]
        questions, query_vectors = [q for q, _ in kept], [vec for _, vec in kept]
        asked = sorted({owner for owner, _, _ in questions})
        needed = [i for o in asked for i in by_owner[o]]
    expected: list[dict[str, list[Hit]]] = [{} for _ in questions]
    tied: list[dict[str, list[Hit]]] = [{} for _ in questions]
    for embedder in embedders:
        own_vectors: dict[int, bytes | None] = dict(zip(
            needed, embed_texts_f32(target, [texts[i] for i in needed], embedder), strict=True))
        asked_with = (query_vectors if embedder == legacy
                      else embed_texts_f32(target, [q for _, q, _ in questions], embedder))
        matrices = {owner: owner_matrix([ids[i] for i in by_owner[owner]], [own_vectors[i] for i in by_owner[owner]])
                    for owner in asked}
        for n, ((owner, _, _), qvec) in enumerate(zip(questions, asked_with, strict=True)):
            expected[n][embedder], tied[n][embedder] = exact_ranking(*matrices[owner], qvec, k, threshold)
    progress(f"embedded {len(needed)} memories of the {len(asked)} asked owners and {len(questions)} questions, "
             f"with {', '.join(embedders)}; their expectations computed")
    probes = [GoldenProbe(owner, question, k, expected[n], [ids[i] for i in evidence], tied[n])
              for n, (owner, question, evidence) in enumerate(questions)]
    clock = LegacyClock(rng, _EPOCH, _EPOCH + timedelta(days=_DAYS))  # drawn after the probes: they stay as they were
    header = Header(f"{nominal:,} generated memories (+{EXTRA}) of {len(by_owner)} owners, faker seed {seed}",
                    embedders, legacy, threshold, k, len(rows), len(probes), len(by_owner), clock.zone_name)

    def memories() -> Iterator[HistoricalMemory]:
        # Embedded as they are written, by the embed tool running on every core for the whole history.
        vectors = stream_embed_f32(target, texts, legacy, block=chunk)
        for i, vec in enumerate(vectors):
            owner, text, conversation = rows[i]
            created = _EPOCH + timedelta(seconds=rng.randrange(0, _DAYS * 86400))
            if rng.random() < 0.2:  # the legacy app's clock had microseconds; the replay compares them too
                created += timedelta(microseconds=rng.randrange(1, 1_000_000))
            expires = (created + timedelta(days=3650)).isoformat() if rng.random() < 0.1 else None
            written = clock.write(created)
            means = written.means.isoformat()
            yield HistoricalMemory(ids[i], owner, text, means, expires, conversation, legacy, vec, vec is not None,
                                   written.written if written.written != means else None)
            if (i + 1) % PROGRESS_EVERY == 0 or i + 1 == len(rows):
                progress(f"embedded and wrote {i + 1:,} of {len(rows):,} memories")

    return History(header, memories(), probes)


def generate_history(target: Target, *, nominal: int, seed: int, embedders: list[str], threshold: float, k: int,
                     progress: Callable[[str], None] = lambda _: None) -> History:
    """`nominal + 3` memories and their probes, every memory in a list (see `stream_history` for large sizes)."""
    history = stream_history(target, nominal=nominal, seed=seed, embedders=embedders, threshold=threshold, k=k,
                             progress=progress)
    return History(history.header, list(history.memories), history.probes)

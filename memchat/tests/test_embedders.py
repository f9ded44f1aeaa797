"""The deterministic local embedders."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memchat.embedders import DEFAULT_EMBEDDER, DIMS, EMBEDDERS, get_embedder
from memchat.tests.helpers import REPO_ROOT

TEXTS = ["My favourite colour is teal.", "What is my favourite colour?", "Our dog's name is Biscuit",
         "flight LH 454 tomorrow", "Ünïcödé wörds: naïve café", "x"]


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_unit_vectors_of_the_declared_size(name: str) -> None:
    e = get_embedder(name)
    for text in TEXTS:
        vec = e.embed(text)
        assert vec is not None and vec.shape == (DIMS,) and vec.dtype == np.float32
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-6


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_deterministic_within_and_across_processes(name: str) -> None:
    e = get_embedder(name)
    first = [e.embed(t) for t in TEXTS]
    assert all(np.array_equal(a, e.embed(t)) for a, t in zip(first, TEXTS, strict=True))
    # a new interpreter (another hash seed) gives the same bytes: no reliance on Python's salted hash()
    code = (f"from memchat.embedders import get_embedder; import sys; e = get_embedder({name!r});"
            f" sys.stdout.write(''.join(e.embed(t).tobytes().hex() for t in {TEXTS!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}, cwd=REPO_ROOT, check=True)
    assert out.stdout == "".join(v.tobytes().hex() for v in first)


def test_v1_and_v2_are_different_vector_spaces() -> None:
    v1, v2 = get_embedder("hash-ngram-v1"), get_embedder("hash-ngram-v2")
    for text in TEXTS:
        a, b = v1.embed(text), v2.embed(text)
        assert not np.array_equal(a, b)
        assert abs(float(a @ b)) < 0.5  # not a slightly perturbed copy either
    # within one model a question is close to its fact; across models it is not
    fact, question = "My favourite colour is teal.", "What is my favourite colour?"
    assert float(v1.embed(fact) @ v1.embed(question)) > 0.4
    assert float(v2.embed(fact) @ v2.embed(question)) > 0.4
    assert abs(float(v1.embed(fact) @ v2.embed(question))) < 0.3


@pytest.mark.parametrize("text", ["", "   ", "?!.,", "what is my", "Do you remember?", "and the of to a"])
@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_no_content_words_no_vector(name: str, text: str) -> None:
    assert get_embedder(name).embed(text) is None


def test_case_and_punctuation_do_not_matter_but_words_do() -> None:
    e = get_embedder(DEFAULT_EMBEDDER)
    assert np.array_equal(e.embed("My favourite colour is TEAL!"), e.embed("my favourite colour is teal"))
    assert not np.array_equal(e.embed("my favourite colour is teal"), e.embed("my favourite colour is red"))


def test_paraphrases_are_closer_than_other_topics() -> None:
    e = get_embedder(DEFAULT_EMBEDDER)
    q = e.embed("What is my favourite colour?")
    same = e.embed("Remember that my favourite colour is amber")
    other = e.embed("My dentist appointment is on Friday at noon.")
    assert float(q @ same) > 0.25 > float(q @ other)


def test_unknown_embedder_is_refused_with_the_known_names() -> None:
    with pytest.raises(ValueError, match="hash-ngram-v1.*hash-ngram-v2"):
        get_embedder("word2vec")

"""harness.app.index_use: what a store's vector indexes lack or have besides those an app promises."""

from __future__ import annotations

from harness.app.index_use import index_differences
from harness.drivers.base import PromisedIndex
from harness.services.databases import VectorIndex

PART = "(mod((hashtext(user_id) & 2147483647), 2) = 0)"


def test_the_promised_indexes_held_as_promised_differ_in_nothing() -> None:
    promised = {"g_0_of_2": PromisedIndex("hnsw", predicate=PART), "ivf": PromisedIndex("ivfflat", (("lists", "32"),))}
    held = {"g_0_of_2": VectorIndex("hnsw", True, (), "(mod(hashtext(user_id) & 2147483647, 2) = 0)"),
            "ivf": VectorIndex("ivfflat", True, (("lists", "32"),), "")}
    assert index_differences(promised, held) == []  # a condition printed with other brackets is the same


def test_each_difference_is_one_line_naming_the_index() -> None:
    promised = {"missing": PromisedIndex("hnsw"), "other_kind": PromisedIndex("hnsw"),
                "broken": PromisedIndex("hnsw"), "lists": PromisedIndex("ivfflat", (("lists", "32"),)),
                "part": PromisedIndex("hnsw", predicate=PART)}
    held = {"other_kind": VectorIndex("ivfflat", True, (), ""), "broken": VectorIndex("hnsw", False, (), ""),
            "lists": VectorIndex("ivfflat", True, (("lists", "33"),), ""), "part": VectorIndex("hnsw", True, (), ""),
            "extra": VectorIndex("ivfflat", True, (("lists", "1"),), "")}
    assert index_differences(promised, held) == [
        "  missing: missing (hnsw)",
        "  extra: not promised (ivfflat, lists = 1)",
        "  broken: not valid, so no query uses it (a build that failed or never finished)",
        "  lists: lists = 33, where 32 is promised",
        "  other_kind: ivfflat, where hnsw is promised",
        f"  part: built over 'every row', where {PART!r} is promised",
    ]

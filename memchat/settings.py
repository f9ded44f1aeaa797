"""Everything the server can be told, from the command line or the environment."""

from __future__ import annotations

from dataclasses import dataclass, field

from memchat.embedders import DEFAULT_EMBEDDER

INDEX_KINDS = ("hnsw", "ivfflat", "none")
# "auto": what the HNSW graph of the rows needs (100k x 256 dims built in 16 s with 512MB and in 114 s at PostgreSQL's
# 64MB: a graph that does not fit is built several times slower); or a size, e.g. 2GB.
DEFAULT_INDEX_BUILD_MEMORY = "auto"


@dataclass(frozen=True)
class Settings:
    pg_dsn: str
    redis_url: str
    faults: frozenset[str] = frozenset()
    embedder: str = DEFAULT_EMBEDDER
    threshold: float = 0.25
    top_k: int = 5
    index: str = "hnsw"
    ann_min_rows: int = 100_000
    index_graph_rows: int = 100_000  # rows a part of the HNSW index built after a bulk load (memory_store)
    ttl_days: float = 365.0
    index_build_memory: str = DEFAULT_INDEX_BUILD_MEMORY  # maintenance_work_mem of build_index (after bulk loads)
    settable_clock: bool = False
    admin_token: str | None = field(default=None, repr=False)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)

    def has(self, fault: str) -> bool:
        return fault in self.faults

    @property
    def effective_threshold(self) -> float:
        return 0.9 if self.has("threshold-too-strict") else self.threshold

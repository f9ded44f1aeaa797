"""The app's own command-line tools (load the legacy store, migrate, embed, re-embed), run as a user would."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from harness.target import Target


class ToolFailed(AssertionError):
    pass


def run_tool(target: Target, name: str, *, stdin: str | None = None, timeout: float = 300, **values: str) -> str:
    """Run one tool; return its standard output. A non-zero exit fails with the tool's own last words."""
    command = target.tool(name, **values)
    proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout,
                          cwd=Path(__file__).resolve().parent.parent)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip() or f"exit code {proc.returncode}").splitlines()[-1]
        raise ToolFailed(f"{target.name} {name} failed: {last}")
    return proc.stdout


def _embed_part(target: Target, texts: list[str], embedder: str) -> list[bytes | None]:
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = run_tool(target, "embed_f32", stdin=lines, embedder=embedder, timeout=900)
    vectors = [json.loads(line).get("embedding_f32") for line in out.splitlines()]
    return [base64.b64decode(v) if v else None for v in vectors]


def embed_texts_f32(target: Target, texts: list[str], embedder: str) -> list[bytes | None]:
    """Vectors from the app's own embedder as little-endian float32 bytes (None: no vector), for many texts: on every
    core, through the target's binary `embed_f32` tool when it has one, else its JSON `embed` tool."""
    if "embed_f32" not in target.tools:
        return [v.astype("<f4").tobytes() if v is not None else None for v in embed_texts(target, texts, embedder)]
    workers = max(1, min(os.cpu_count() or 1, len(texts) // 2000 or 1))
    step = -(-len(texts) // workers)
    parts = [texts[i:i + step] for i in range(0, len(texts), step)] or [[]]
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda part: _embed_part(target, part, embedder), parts))
    vectors = [v for part in results for v in part]
    if len(vectors) != len(texts):
        raise ToolFailed(f"{target.name} embed_f32 returned {len(vectors)} vectors for {len(texts)} texts")
    return vectors


def embed_texts(target: Target, texts: list[str], embedder: str) -> list[np.ndarray | None]:
    """Vectors from the app's own embedder, so that expected rankings need not import the app."""
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = run_tool(target, "embed", stdin=lines, embedder=embedder)
    vectors = []
    for line in out.splitlines():
        emb = json.loads(line)["embedding"]
        vectors.append(np.asarray(emb, dtype=np.float64) if emb is not None else None)
    if len(vectors) != len(texts):
        raise ToolFailed(f"{target.name} embed returned {len(vectors)} vectors for {len(texts)} texts")
    return vectors

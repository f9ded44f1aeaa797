"""The app's own command-line tools (load the legacy store, migrate, embed, re-embed), run as a user would."""

from __future__ import annotations

import json
import subprocess
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

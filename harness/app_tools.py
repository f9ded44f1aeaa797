"""The app's own command-line tools (load the legacy store, migrate, embed, re-embed), run as a user would."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from harness.target import Target


class ToolFailed(AssertionError):
    pass


ROOT = Path(__file__).resolve().parent.parent


def _checked(target: Target, name: str, returncode: int, stdout: str, stderr: str) -> str:
    if returncode != 0:
        last = (stderr.strip() or stdout.strip() or f"exit code {returncode}").splitlines()[-1]
        raise ToolFailed(f"{target.name} {name} failed: {last}")
    return stdout


def run_tool(target: Target, name: str, *, stdin: str | None = None, timeout: float = 300, **values: str) -> str:
    """Run one tool; return its standard output. A non-zero exit fails with the tool's own last words."""
    proc = subprocess.run(target.tool(name, **values), input=stdin, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
    return _checked(target, name, proc.returncode, proc.stdout, proc.stderr)


def run_tool_fed(target: Target, name: str, lines: Iterable[str], *, timeout: float = 900, **values: str) -> str:
    """Run one tool with `lines` written to its standard input as they are made, so that making them and the tool's
    own work overlap; return its standard output. A tool that stops reading (it failed) or outlives `timeout` stops
    the feeding and fails with its own last words; lines that fail to be made stop the tool before it reads its
    input's end, so that it never takes a part for the whole."""
    timed_out = threading.Event()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(target.tool(name, **values), stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=ROOT)
        watchdog = threading.Timer(timeout, lambda: (timed_out.set(), proc.kill()))
        watchdog.start()
        assert proc.stdin is not None
        feed = io.TextIOWrapper(proc.stdin, encoding="utf-8")
        try:
            feed.writelines(lines)
            feed.close()
        except BrokenPipeError:
            pass  # the tool stopped reading: its exit code and last words say why
        except BaseException:
            proc.kill()
            raise
        finally:
            try:
                feed.close()
            except OSError:
                pass
            returncode = proc.wait()
            watchdog.cancel()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if timed_out.is_set():
        stderr += f"\nstopped after {timeout:.0f} s"
    return _checked(target, name, returncode, stdout, stderr)


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

"""The app's own command-line tools (load the legacy store, migrate, embed, re-embed), run as a user would."""

from __future__ import annotations

import base64
import io
import json
import os
import queue
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from harness.app.target import Target, fill
from harness.warm_start import ForkedProcess, Stdio, popen


class ToolFailed(AssertionError):
    pass


ROOT = Path(__file__).resolve().parents[2]


def _checked(target: Target, name: str, returncode: int, stdout: str, stderr: str) -> str:
    if returncode != 0:
        last = (stderr.strip() or stdout.strip() or f"exit code {returncode}").splitlines()[-1]
        raise ToolFailed(f"{target.name} {name} failed: {last}")
    return stdout


@dataclass(frozen=True)
class ToolRun:
    """One run of an app's tool, as it ended: its exit status and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


def _popen(target: Target, name: str, values: dict[str, str], extra: Sequence[str] = (),
           **stdio: Stdio) -> subprocess.Popen | ForkedProcess:
    """One run of a tool (with `extra` words after its command), forked from the app's warm interpreter where its
    target preloads libraries ([app] preload) and the tool runs on the app's own interpreter: a tool of the reference
    app then costs its own work, not a second of imports. Any other tool is a new process."""
    command = [*target.tool(name, **values), *extra]
    own = bool(target.start_command) and command[0] == fill(target.start_command[:1])[0]
    return popen(target.warm_start if own else None, command, cwd=ROOT, **stdio)


def run_tool(target: Target, name: str, *, extra: Sequence[str] = (), stdin: str | None = None, timeout: float = 300,
             **values: str) -> str:
    """Run one tool (with `extra` words after its command); return its standard output. A non-zero exit fails with
    the tool's own last words."""
    run = try_tool(target, name, extra=extra, stdin=stdin, timeout=timeout, **values)
    return _checked(target, name, run.returncode, run.stdout, run.stderr)


def try_tool(target: Target, name: str, *, extra: Sequence[str] = (), stdin: str | None = None, timeout: float = 300,
             **values: str) -> ToolRun:
    """Run one tool, with `extra` words after its command (what an operator adds), however it ends."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write((stdin or "").encode())
        given.seek(0)
        proc = _popen(target, name, values, extra, stdin=given, stdout=out, stderr=err)
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        return ToolRun(returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def run_tool_fed(target: Target, name: str, lines: Iterable[str], *, timeout: float = 900, **values: str) -> str:
    """Run one tool with `lines` written to its standard input as they are made, so that making them and the tool's
    own work overlap; return its standard output. A tool that stops reading (it failed) or outlives `timeout` stops
    the feeding and fails with its own last words; lines that fail to be made stop the tool before it reads its
    input's end, so that it never takes a part for the whole."""
    timed_out = threading.Event()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = _popen(target, name, values, stdin=subprocess.PIPE, stdout=out, stderr=err)
        def time_out() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(timeout, time_out)
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


STREAM_BLOCK = 2000  # texts per block of a stream: the first vectors come within a tenth of a second
# Texts per run of the tool in a stream: one run over 300,000 texts took 28 % longer than twelve of 25,000 (the app's
# cache of hashed features outgrows the processor's caches), so each lane starts a new run now and then.
STREAM_RUN = 24_000


def stream_embed_f32(target: Target, texts: Sequence[str], embedder: str, *, block: int = STREAM_BLOCK,
                     timeout: float = 3600) -> Iterator[bytes | None]:
    """The vectors of `texts` in order, as they are made (as embed_texts_f32 gives them): one lane per core, each
    embedding every other block of `block` texts through the target's `embed_f32` tool (a new run of it every
    STREAM_RUN texts, started while the last one finishes) and reading its vectors as they come, while they are
    taken in order here. Running the tool once per chunk of 50,000 instead left the reader idle while the first
    chunk was embedded and the tools idle while the last was read (a generated million: 93 s, streamed 76 s).
    Without `embed_f32`, embed_texts_f32 a chunk at a time. A tool that fails, stops early or outlives `timeout`
    fails with its own last words."""
    if "embed_f32" not in target.tools:
        chunk = block * 25
        for first in range(0, len(texts), chunk):
            yield from embed_texts_f32(target, list(texts[first:first + chunk]), embedder)
        return
    firsts = range(0, len(texts), block)
    workers = max(1, min(os.cpu_count() or 1, len(firsts)))
    lanes = [_EmbedLane(target, embedder, texts, firsts[n::workers], block) for n in range(workers)]
    def time_out() -> None:
        for lane in lanes:
            lane.stop(f"stopped after {timeout:.0f} s")

    watchdog = threading.Timer(timeout, time_out)
    watchdog.start()
    try:
        for lane in lanes:
            lane.start()
        for n in range(len(firsts)):
            yield from lanes[n % workers].next_block()
        for lane in lanes:  # each lane's last run read to its end and exited well: not one vector too many
            lane.join()
            if lane.failure is not None:
                raise lane.failure
    finally:
        watchdog.cancel()
        for lane in lanes:
            lane.stop()
        for lane in lanes:
            if lane.ident is not None:
                lane.join()


class _EmbedLane(threading.Thread):
    """Every `workers`-th block of a stream, embedded by runs of the `embed_f32` tool; each block's vectors are
    queued as a list (queued one by one, they cost a quarter of the stream's time in locks), a failure in their
    place."""

    _FAILED = object()

    def __init__(self, target: Target, embedder: str, texts: Sequence[str], firsts: range, block: int) -> None:
        super().__init__(daemon=True)
        self.target, self.embedder, self.texts, self.block = target, embedder, texts, block
        per_run = max(1, STREAM_RUN // block)
        self.runs = [firsts[i:i + per_run] for i in range(0, len(firsts), per_run)]
        self.blocks: queue.Queue = queue.Queue(maxsize=2)  # the lane runs at most two blocks ahead
        self.stopped: str | None = None
        self.procs: list[subprocess.Popen | ForkedProcess] = []
        self.failure: ToolFailed | None = None

    def next_block(self) -> list[bytes | None]:
        item = self.blocks.get()
        if item is self._FAILED:
            raise self.failure or ToolFailed(f"{self.target.name} embed_f32 stopped")
        return item

    def stop(self, why: str = "") -> None:
        self.stopped = why or self.stopped or "stopped"
        for proc in list(self.procs):
            if proc.poll() is None:
                proc.kill()

    def run(self) -> None:
        try:
            ahead = self._spawn(self.runs[0]) if self.runs else None
            for n, firsts in enumerate(self.runs):
                current, ahead = ahead, self._spawn(self.runs[n + 1]) if n + 1 < len(self.runs) else None
                assert current is not None
                self._read(*current, [len(self.texts[f:f + self.block]) for f in firsts])
        except Exception as e:  # the reader waits for this lane's next vector: it must hear of any failure
            self.failure = e if isinstance(e, ToolFailed) else ToolFailed(f"{self.target.name} embed_f32: {e}")
            self._put(self._FAILED)
        finally:
            self.stop()

    def _spawn(self, firsts: range) -> tuple[subprocess.Popen | ForkedProcess, IO[bytes]]:
        if self.stopped:
            raise ToolFailed(f"{self.target.name} embed_f32 {self.stopped}")
        err = tempfile.TemporaryFile()
        proc = _popen(self.target, "embed_f32", {"embedder": self.embedder}, stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, stderr=err)
        self.procs.append(proc)
        lines = ("".join(json.dumps({"text": t}) + "\n" for t in self.texts[f:f + self.block]).encode()
                 for f in firsts)
        threading.Thread(target=_feed, args=(proc, lines), daemon=True).start()
        return proc, err

    def _read(self, proc: subprocess.Popen | ForkedProcess, err: IO[bytes], sizes: list[int]) -> None:
        assert proc.stdout is not None
        with err, proc.stdout:
            for size in sizes:
                vectors: list[bytes | None] = []
                for _ in range(size):
                    line = proc.stdout.readline()
                    if not line:
                        raise self._failed(proc, err, "fewer")
                    vector = json.loads(line).get("embedding_f32")
                    vectors.append(base64.b64decode(vector) if vector else None)
                if not self._put(vectors):
                    return
            if proc.stdout.read(1) or proc.wait() != 0:
                raise self._failed(proc, err, "more")
        self.procs.remove(proc)

    def _put(self, item: object) -> bool:
        """Queue `item` unless the stream stopped (the reader left): then False."""
        while True:
            try:
                self.blocks.put(item, timeout=0.5)
                return True
            except queue.Full:
                if self.stopped:
                    return False

    def _failed(self, proc: subprocess.Popen | ForkedProcess, err: IO[bytes], vectors: str) -> ToolFailed:
        """Why a run gave no next vector, or one too many: its exit and last words."""
        try:
            returncode = proc.wait(timeout=10)  # its output ended or went on: it is exiting, with its last words
        except subprocess.TimeoutExpired:
            proc.kill()
            returncode = proc.wait()
        err.seek(0)
        stderr = err.read().decode(errors="replace") + (f"\n{self.stopped}" if self.stopped else "")
        try:
            _checked(self.target, "embed_f32", returncode, "", stderr)
        except ToolFailed as failed:
            return failed
        return ToolFailed(f"{self.target.name} embed_f32 gave {vectors} vectors than it was given texts")


def _feed(proc: subprocess.Popen | ForkedProcess, lines: Iterable[bytes]) -> None:
    assert proc.stdin is not None
    try:
        for line in lines:
            proc.stdin.write(line)
        proc.stdin.close()
    except (OSError, ValueError):
        pass  # the tool stopped reading (it failed, or the stream was stopped): its reader says why


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

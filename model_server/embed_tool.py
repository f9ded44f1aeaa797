"""`python -m model_server.embed_tool --embedder NAME [--encoding base64]`: the model server's embeddings as a
command-line tool, for apps that embed through the suite's model server (their target's `[tools] embed`).

It reads JSON Lines `{"text": ...}` on standard input and writes one line per text, in order: `{"embedding": [...]}`
(or `{"embedding_f32": "<base64 little-endian float32>"}` with `--encoding base64`), the very vector the server
answers an app's embedding request with. A text without a word has no vector (`null`): the server gives it all
zeros, which no similarity can rank.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys

import numpy as np

from model_server.embeddings import MODELS, embed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_server.embed_tool", description=__doc__)
    parser.add_argument("--embedder", required=True, help=f"one of {', '.join(MODELS)}")
    parser.add_argument("--encoding", choices=("json", "base64"), default="json")
    args = parser.parse_args(argv)
    if args.embedder not in MODELS:
        print(f"ERROR: unknown embedding model {args.embedder!r}; the model server has {', '.join(MODELS)}",
              file=sys.stderr)
        return 2
    out = sys.stdout
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            text = json.loads(line)["text"]
        except (ValueError, KeyError, TypeError):
            print(f"ERROR: stdin line {number} is not a JSON object with a text", file=sys.stderr)
            return 2
        vector = embed(text, args.embedder)
        if not any(vector):
            out.write(json.dumps({"embedding_f32" if args.encoding == "base64" else "embedding": None}) + "\n")
        elif args.encoding == "base64":
            raw = np.asarray(vector, dtype="<f4").tobytes()
            out.write(json.dumps({"embedding_f32": base64.b64encode(raw).decode()}) + "\n")
        else:
            out.write(json.dumps({"embedding": vector}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

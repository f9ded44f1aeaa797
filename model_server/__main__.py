"""`python -m model_server --host H --port P`: prints `model server: http://H:PORT/v1`, serves till a signal."""

from __future__ import annotations

import argparse
import signal
import socket
import sys

import uvicorn

from model_server.server import MEMORY_TYPES, build_app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--memory-type", choices=MEMORY_TYPES, default="context",
                        help="type of the memories Open WebUI's memory review adds (default: context)")
    parser.add_argument("--tools", choices=("use", "ignore"), default="use",
                        help="call the tools an app offers (default) or answer as a chat model that ignores them")
    parser.add_argument("--chat-model", action="append", default=[], metavar="NAME",
                        help="a chat model name it answers besides memtest-assistant (repeatable); any other: 404")
    parser.add_argument("--api-key", default=None, metavar="KEY",
                        help="require this key as the bearer of every /v1 request (else 401), as OpenAI does")
    args = parser.parse_args(argv)
    # Bind (and listen) before printing: the printed port is then real, and a client that connects at once
    # waits in the backlog until uvicorn accepts.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        print(f"ERROR: model server cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    sock.listen(128)
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    print(f"model server: http://{host}:{sock.getsockname()[1]}/v1", flush=True)
    app = build_app(args.memory_type, use_tools=args.tools == "use", chat_models=tuple(args.chat_model),
                    api_key=args.api_key)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal with the handlers it found; these
    # no-op handlers make a requested stop exit with 0 instead of dying by the signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())

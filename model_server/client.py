"""The suite's side of the model server: start one for an app, ask it for a reply, read its review log."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.app.app_launcher import RunningApp, free_port, start_process, stop_process
from harness.services.http_clients import tls
from harness.warm_start import ForkedProcess


@dataclass
class ModelServer:
    base_url: str  # ends in /v1, as OpenAI-compatible clients expect
    api_key: str | None = field(default=None, repr=False)  # the bearer it requires, if it was started with one
    process: subprocess.Popen | ForkedProcess | None = field(default=None, repr=False)

    @classmethod
    def of(cls, app: RunningApp) -> ModelServer | None:
        """The model server the suite started for `app`, if any (an app given by --base-url has its own model)."""
        return cls(app.model_url) if app.model_url else None

    def reply(self, text: str) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        resp = httpx.post(self.base_url + "/chat/completions", verify=tls(), timeout=30, headers=headers,
                          json={"model": "memtest-assistant", "messages": [{"role": "user", "content": text}]})
        resp.raise_for_status()
        return resp.json()["choices"][0]["message"]["content"]

    def reviews(self, user_id: str) -> list[dict]:
        """The memory reviews it answered for this user (the app forwards who asks), oldest first."""
        resp = httpx.get(self.base_url.removesuffix("/v1") + "/memtest/reviews", verify=tls(),
                         params={"user_id": user_id},
                         timeout=10)
        resp.raise_for_status()
        return resp.json()["reviews"]

    def stop(self) -> None:
        stop_process(self.process)

    @property
    def processes(self) -> list[subprocess.Popen | ForkedProcess]:
        """Its process, as an app's companion (none for a model server the suite did not start)."""
        return [self.process] if self.process is not None else []


def start_model_server(log_path: Path, port: int | None = None, use_tools: bool = True,
                       chat_models: tuple[str, ...] = (), api_key: str | None = None) -> ModelServer:
    """A model server on a free port, or on `port`: an app restarted on its data may have stored the server's
    address (Letta keeps it in each agent's model settings). `use_tools` False: it ignores the tools apps offer.
    `chat_models`: the chat model names the app is configured with besides memtest-assistant (any other is answered
    404); `api_key`: the bearer it then requires of every request (else 401)."""
    port = port or free_port()
    command = [sys.executable, "-m", "model_server", "--host", "127.0.0.1", "--port", str(port),
               "--tools", "use" if use_tools else "ignore"]
    command += [arg for name in chat_models for arg in ("--chat-model", name)]
    # one argument with "=": a key drawn by secrets.token_urlsafe starts with "-" once in 64, which argparse takes
    # for an option and refuses ("expected one argument")
    command += [f"--api-key={api_key}"] if api_key else []
    process, _ = start_process("the model server", command, env={}, log_path=log_path, timeout=30,
                               health_url=f"http://127.0.0.1:{port}/health")
    return ModelServer(f"http://127.0.0.1:{port}/v1", api_key, process)

"""What Letta's driver parts share: the base class of each, holding the driver's state and its agents' models."""

from __future__ import annotations

from harness.app.target import Target
from harness.drivers.base import AppDriver
from harness.drivers.letta.api import EMBEDDER
from model_server.server import CHAT_MODEL


class LettaBase(AppDriver):
    """What the parts share of one driver: the organization and agent it made for each user, and the model and
    embedding its agents are created with."""

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        # Per user id: the organization and agent the driver made for them (ids are uuids: unique across apps).
        self._orgs: dict[str, str] = {}
        self._agents: dict[str, str] = {}

    @property
    def model(self) -> str:
        return str(self.target.app.get("agent_model") or f"openai-proxy/{CHAT_MODEL}")

    @property
    def embedding(self) -> str:
        return str(self.target.app.get("agent_embedding") or f"openai/{EMBEDDER}")

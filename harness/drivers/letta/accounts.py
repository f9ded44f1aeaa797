"""Letta's accounts: an organization, a user and an agent for each suite user, made and deleted through its admin
API; a user's session, which is the `user_id` header, and whether Letta serves it."""

from __future__ import annotations

import uuid

import httpx

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, DriverError, UserSession, faults_of
from harness.drivers.letta.api import ARCHIVAL_TOOLS, HTTP_TIMEOUT, SHARED_ORGANIZATION, _check
from harness.drivers.letta.common import LettaBase
from harness.drivers.letta.session import LettaSession
from harness.services.http_clients import client, tls


class LettaAccounts(LettaBase):
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        """An organization of the user's own, the user in it (named by the address: Letta keeps no e-mail), and
        their agent with the archival tools. `password` is not used: Letta users have none."""
        if user_id is not None:
            raise DriverError("Letta chooses its users' ids itself (user-<uuid4>)")
        faults = faults_of(app.settings)
        admin = client(base_url=app.base_url, timeout=HTTP_TIMEOUT)
        with admin:
            org = (self._shared_organization(admin) if "one-organization" in faults else
                   _check(admin.post("/v1/admin/orgs/", json={"name": email}), f"creating {email}'s organization"))
            user = _check(admin.post("/v1/admin/users/", json={"name": email, "organization_id": org["id"]}),
                          f"creating user {email}")
            acting = {"user_id": user["id"]}
            # Letta's base tools exist per organization; an agent cannot name one its organization lacks.
            _check(admin.post("/v1/tools/add-base-tools", headers=acting), f"adding the base tools for {email}")
            tools = {} if "agent-without-archival-tools" in faults else {"tools": list(ARCHIVAL_TOOLS)}
            agent = _check(admin.post("/v1/agents/", headers=acting, json={
                "name": "assistant", "model": self.model, "embedding": self.embedding, **tools,
                "memory_blocks": [{"label": "human", "value": f"The user's name is {name}."},
                                  {"label": "persona", "value": "I am a helpful assistant with a long memory."}]}),
                f"creating {email}'s agent")
        self._orgs[user["id"]], self._agents[user["id"]] = org["id"], agent["id"]
        return Account(str(user["id"]), email, "", name)

    @staticmethod
    def _shared_organization(admin: httpx.Client) -> dict:
        """The one organization every user is put in under the fault one-organization (made by its first user)."""
        orgs = _check(admin.get("/v1/admin/orgs/", params={"limit": 1000}), "listing organizations")
        found = next((o for o in orgs if o.get("name") == SHARED_ORGANIZATION), None)
        return found or _check(admin.post("/v1/admin/orgs/", json={"name": SHARED_ORGANIZATION}),
                               "creating the organization of every user")

    def _org_of(self, app: RunningApp, account: Account) -> str | None:
        if account.id in self._orgs:
            return self._orgs[account.id]
        after = None
        with client(base_url=app.base_url, timeout=HTTP_TIMEOUT) as admin:
            while True:
                users = _check(admin.get("/v1/admin/users/", params={"limit": 100, **({"after": after} if after
                                                                                    else {})}), "listing users")
                found = next((u for u in users if u["id"] == account.id), None)
                if found or len(users) < 100:
                    return found["organization_id"] if found else None
                after = users[-1]["id"]

    def delete_user(self, app: RunningApp, account: Account) -> None:
        """Delete the user's organization, and with it everything of theirs (a user already gone is fine)."""
        org = self._org_of(app, account)
        if org is None:
            return
        if "one-organization" in faults_of(app.settings):  # the organization is everyone's: only the user goes
            resp = httpx.delete(app.base_url + "/v1/admin/users/", params={"user_id": account.id}, timeout=HTTP_TIMEOUT)
        else:
            resp = httpx.delete(app.base_url + "/v1/admin/orgs/", params={"org_id": org}, timeout=HTTP_TIMEOUT)
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting {account.label}'s organization: HTTP {resp.status_code} {resp.text[:200]}")

    def _agent_of(self, app: RunningApp, account: Account) -> str:
        if account.id not in self._agents:
            agents = _check(httpx.get(app.base_url + "/v1/agents/", verify=tls(), headers={"user_id": account.id},
                                      timeout=HTTP_TIMEOUT), f"finding {account.label}'s agent")
            if not agents:
                raise DriverError(f"{account.label} has no agent in Letta")
            self._agents[account.id] = agents[0]["id"]
        return self._agents[account.id]

    def session(self, app: RunningApp, account: Account) -> LettaSession:
        return LettaSession(app, account, self._agent_of(app, account), lambda other: self.session(app, other))

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        raise DriverError("Letta has no web page to sign a browser into: its users act through its API only")

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        """Whether Letta serves requests with these credentials ({"user_id": ...}): 200 on the user's agent list,
        refused with 404 (unknown or deleted user, or none under LETTA_NO_DEFAULT_ACTOR) or 400 (malformed id)."""
        user_id = browser_state.get("user_id")
        if not isinstance(user_id, str):
            raise DriverError(f"Letta credentials are {{'user_id': ...}}, not {sorted(browser_state)}")
        resp = httpx.get(app.base_url + "/v1/agents/", verify=tls(), params={"limit": 1}, headers={"user_id": user_id},
                         timeout=HTTP_TIMEOUT)
        if resp.status_code == 200:
            return True
        if resp.status_code in (400, 401, 403, 404):
            return False
        raise DriverError(f"Letta answered HTTP {resp.status_code} for user {user_id}: {resp.text[:200]}")

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        return {"user_id": f"user-{uuid.uuid4()}"}  # the shape of Letta's own ids, never issued

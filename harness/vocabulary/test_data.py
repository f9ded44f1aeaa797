"""Test data: faker with a fixed, printed, overridable seed, and identities that are unique by construction.

Uniqueness never rests on faker's output: every e-mail and id carries the worker id and a per-run counter.
"""

from __future__ import annotations

import itertools
import re
import secrets

from faker import Faker

DEFAULT_SEED = 20261130


class TestData:
    __test__ = False  # not a pytest test class

    def __init__(self, seed: int, worker: str, email_domain: str = "") -> None:
        self.seed = seed
        self.worker = worker
        self.email_domain = email_domain  # the target's [accounts] email_domain: under it for an app that refuses .test
        self.run = secrets.token_hex(3)  # two runs against one long-lived app never collide
        self._counter = itertools.count(1)

    def faker_for(self, scenario_key: str) -> Faker:
        """A faker seeded from the run's seed and the scenario, so a scenario's data is the same in any order."""
        fake = Faker("en_US")
        fake.seed_instance(f"{self.seed}:{scenario_key}")
        return fake

    def unique_tag(self) -> str:
        return f"{self.worker}{self.run}n{next(self._counter)}"

    def email(self, local: str, tag: str, domain: str = "x.test") -> str:
        """`ana@x.test` -> `ana+gw0a1b2c3n7@x.test`: the words a scenario wrote, made unique for this run."""
        local = re.sub(r"[^A-Za-z0-9._%-]", "", local) or "user"  # "%": a wildcard to a wrong matcher
        if self.email_domain:
            domain = f"{domain}.{self.email_domain}"
        return f"{local}+{tag}@{domain}"

    def password(self) -> str:
        return "pw-" + secrets.token_urlsafe(12)

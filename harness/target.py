"""The app under test, described by one configuration file: how to start it, its API paths, its locators and its
command-line tools. Pointing the suite at a team's own app means writing such a file; steps stay unchanged."""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TARGET = Path(__file__).resolve().parent.parent / "targets" / "memchat.toml"


class TargetError(Exception):
    pass


@dataclass(frozen=True)
class Target:
    name: str
    path: Path
    start_command: list[str]
    health_path: str
    api: dict[str, str]
    locators: dict[str, dict[str, Any]]
    tools: dict[str, list[str]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def tool(self, name: str, **values: str) -> list[str]:
        """The command line of one of the app's tools (migrate, redis-load, ...), with {placeholders} filled in."""
        if name not in self.tools:
            raise TargetError(f"{self.path.name} defines no [tools] {name}; add it to use this scenario")
        return fill(self.tools[name], **values)


def fill(template: list[str], **values: str) -> list[str]:
    values = {"python": sys.executable, **values}
    try:
        return [part.format(**values) for part in template]
    except KeyError as e:
        raise TargetError(f"unknown placeholder {e} in command {template}") from None
    except (IndexError, ValueError) as e:
        raise TargetError(f"bad placeholder in command {template}: {e}; use {{name}} placeholders") from None


def load_target(path: Path | None = None) -> Target:
    path = Path(path or DEFAULT_TARGET)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TargetError(f"target file {path} not found; pass --target with an existing file") from None
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"target file {path} is not valid TOML: {e}") from None
    except OSError as e:
        raise TargetError(f"target file {path} cannot be read: {e.strerror}") from None
    try:
        return Target(
            name=data["name"], path=path, start_command=list(data["app"]["command"]),
            health_path=data["app"].get("health", "/healthz"), api=dict(data["api"]),
            locators={k: dict(v) for k, v in data["locators"].items()},
            tools={k: list(v) for k, v in data.get("tools", {}).items()}, env=dict(data["app"].get("env", {})),
        )
    except KeyError as e:
        raise TargetError(f"target file {path} lacks the key {e}; see targets/memchat.toml for the shape") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise TargetError(f"target file {path} has a value of the wrong shape ({e});"
                          " see targets/memchat.toml") from None

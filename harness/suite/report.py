"""What the Allure report carries besides the steps: the environment, the failure categories, and the evidence of a
failure (page URLs, screenshots, Playwright traces, recall tables)."""

from __future__ import annotations

import json
from pathlib import Path

import allure

PLAYWRIGHT_TRACE = "application/vnd.allure.playwright-trace"

ALLURERC = Path(__file__).resolve().parents[2] / "allurerc.json"


def categories_for_allure2() -> list[dict]:
    """The failure categories of allurerc.json (which Allure 3 reads) as Allure 2's categories.json has them."""
    rules = json.loads(ALLURERC.read_text(encoding="utf-8"))["categories"]
    converted = []
    for rule in rules:
        matcher = rule["matchers"]
        entry = {"name": rule["name"], "matchedStatuses": matcher["statuses"]}
        if "message" in matcher:
            entry["messageRegex"] = f"(?s).*(?:{matcher['message']}).*"
        converted.append(entry)
    return converted


def name_example(scenario: str, example: dict[str, str]) -> None:
    allure.dynamic.title(f"{scenario} ({', '.join(f'{k}: {v}' for k, v in example.items())})")


def alluredir(config) -> Path | None:  # noqa: ANN001 - pytest.Config
    value = config.getoption("allure_report_dir", default=None)
    return Path(value) if value else None


def write_environment(directory: Path, values: dict[str, str | None]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"{k}={str(v).replace(chr(10), ' ')}" for k, v in values.items() if v not in (None, "")]
    (directory / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (directory / "categories.json").write_text(json.dumps(categories_for_allure2(), indent=2), encoding="utf-8")


def attach_artifacts(artifacts: list[tuple[str, str]]) -> None:
    """pytest-playwright's kept artifacts (kind, path) onto the current Allure test."""
    for kind, path in artifacts:
        if not Path(path).exists():
            continue
        if kind == "screenshot":
            allure.attach.file(path, name=Path(path).name, attachment_type=allure.attachment_type.PNG)
        elif kind == "trace":
            allure.attach.file(path, name=Path(path).name, extension="zip",
                               attachment_type=PLAYWRIGHT_TRACE)
        elif kind == "video":
            allure.attach.file(path, name=Path(path).name, attachment_type=allure.attachment_type.WEBM)


def attach_text(name: str, text: str) -> None:
    allure.attach(text, name=name, attachment_type=allure.attachment_type.TEXT)


def attach_table(name: str, csv_text: str) -> None:
    allure.attach(csv_text, name=name, attachment_type=allure.attachment_type.CSV)

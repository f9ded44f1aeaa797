"""A failed scenario keeps its browsers' evidence (a trace of every browser, a screenshot of every page) in its folder
of --output and on its Allure result; a passed one keeps none. The suite records it through Playwright's own tracing,
so this runs real scenarios in a child pytest: one that a fault of the reference app makes fail, one that passes."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from harness.browser.evidence import EvidenceOptions, folder_for

ROOT = Path(__file__).resolve().parent.parent
FAILS = "features/in_session_memory.feature::test_a_correction_replaces_the_old_fact"
PASSES = "features/multi_user_isolation.feature::test_a_session_the_app_never_gave_is_refused"


def test_a_failed_scenario_keeps_a_trace_and_screenshots_and_a_passed_one_nothing(tmp_path: Path) -> None:
    output, allure = tmp_path / "pw", tmp_path / "allure"
    proc = subprocess.run([sys.executable, "-m", "pytest", FAILS, PASSES, "--faults", "context-dropped",
                           "-p", "no:cacheprovider", "--output", str(output), "--alluredir", str(allure)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout[-3000:]
    failed = folder_for(output, FAILS)
    kept = sorted(p.name for p in failed.iterdir())
    assert kept == ["test-failed-1.png", "trace.zip"], kept
    with zipfile.ZipFile(failed / "trace.zip") as trace:
        names = trace.namelist()
    assert "trace.trace" in names and not any(n.startswith("resources/page@") and n.endswith(".jpeg")
                                              for n in names), names  # snapshots, no screencast frames
    assert not folder_for(output, PASSES).exists()
    results = [json.loads(p.read_text()) for p in allure.glob("*-result.json")]
    failing = next(r for r in results if r["status"] == "failed")
    attached = {a["name"]: a["type"] for a in failing.get("attachments", [])}
    assert attached.get("trace.zip") == "application/vnd.allure.playwright-trace", attached
    assert attached.get("test-failed-1.png") == "image/png", attached


def test_the_options_keep_what_pytest_playwright_would() -> None:
    retain = EvidenceOptions(tracing="retain-on-failure", screenshot="only-on-failure", video="off")
    assert retain.keeps(retain.tracing, failed=True) and not retain.keeps(retain.tracing, failed=False)
    assert retain.keeps(retain.screenshot, failed=True) and not retain.keeps(retain.video, failed=True)
    always = EvidenceOptions(tracing="on", screenshot="on")
    assert always.keeps(always.tracing, failed=False) and always.keeps(always.screenshot, failed=False)
    assert folder_for(Path("out"), "features/x.feature::test_y[a b]") == Path("out/features-x-feature-test-y-a-b")

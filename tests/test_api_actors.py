"""The same features through an app's API, for apps without a web page: the reference app as such a service
(targets/memchat-api.toml), one scenario of each area, in a child pytest."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_OF_EACH_AREA = " or ".join((
    "fact_told_earlier_in_the_conversation",  # in-session
    "each_answered_in_a_later_conversation",  # cross-session: a later conversation
    "two_users_at_the_same_time", "cannot_be_opened_by_its_address", "never_gave",  # isolation
    "leaves_nothing_behind",  # account life cycle
    "(listed_seeds_sessions_of_several_users and first)",  # generated: the first seed's session
    "after_closing_and_reopening_the_browser",  # a browser's only: skipped with one line
))


def test_one_scenario_of_each_area_passes_through_the_api_and_a_browsers_only_is_skipped(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "features", "--target", "memchat-api", "-k",
                           ONE_OF_EACH_AREA, "-p", "no:cacheprovider", "-rs", f"--junitxml={junit}",
                           "--alluredir", str(tmp_path / "allure"), "--output", str(tmp_path / "pw")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    cases = ET.parse(junit).getroot().iter("testcase")
    outcome = {c.get("name"): ("skipped" if c.find("skipped") is not None else
                               "failed" if c.find("failure") is not None or c.find("error") is not None else "passed")
               for c in cases}
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert list(outcome.values()).count("passed") >= 8, outcome
    browser_only = [n for n in outcome if "reopening_the_browser" in n]
    assert browser_only and all(outcome[n] == "skipped" for n in browser_only), outcome
    assert "a browser profile of her own needs a web page, and the memchat-api target has none" in proc.stdout

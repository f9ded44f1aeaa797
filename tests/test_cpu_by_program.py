"""tools.cpu_by_program: each process counted by the program it is (a warm start's fork by its app's Python), and the
measured command's exit status passed on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tools.cpu_by_program import main, program_of


def test_each_process_is_counted_by_its_program() -> None:
    assert program_of("/usr/lib/chromium/chromium-headless-shell --type=renderer --headless=old") == "Chromium"
    assert program_of("/w/.tools/open-webui/bin/python /w/harness/warm_start/zygote.py 13 /w/.tools/open-webui/bin "
                      "torch") == "Open WebUI"
    assert program_of("/w/.tools/open-webui-0.11.4/bin/python .tools/open-webui-0.11.4/bin/open-webui serve") \
        == "Open WebUI, older release"
    assert program_of("/w/.tools/khoj/bin/python -m django migrate --noinput") == "Khoj"
    assert program_of("/w/.tools/letta/bin/python /w/harness/warm_start/zygote.py 14 /w/.tools/letta/bin openai") \
        == "Letta"
    assert program_of("/w/.venv/bin/python /w/harness/warm_start/zygote.py 14 /w numpy psycopg redis") == "memchat"
    assert program_of("/w/.venv/bin/python -u -c import sys;exec(eval(sys.stdin.readline()))") \
        == "the suite's pytest processes"
    assert program_of("postgres: postgres exact_1 [local] idle") == "PostgreSQL"


def test_the_command_runs_and_its_status_is_passed_on(tmp_path: Path) -> None:
    out = tmp_path / "cpu.json"
    assert main(["--out", str(out), "--", sys.executable, "-c", "import sys; sys.exit(3)"]) == 3
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["command"][-1] == "import sys; sys.exit(3)"
    assert {"wall_s", "machine_busy_core_s", "by_program", "by_command"} <= found.keys()

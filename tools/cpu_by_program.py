"""Where a command's CPU goes, by program: every process's CPU read from /proc each second while COMMAND runs.

    python -m tools.cpu_by_program [--out reports/cpu-by-program.json] -- COMMAND [ARGS...]

Prints, once COMMAND ends, the machine's busy core-seconds over the run and each program's share (Chromium, each
app, PostgreSQL, the suite's pytest processes...), and writes them with the 40 costliest command lines as JSON; exits
with COMMAND's status. A process is counted from its first sample, so one that lives under a second is missed, and
one that was running before COMMAND started is counted only for what it spent after. An app started warm is a fork of
its warm interpreter (harness/warm_start) and shows that interpreter's command line: it is counted by the Python it
runs on (.tools/open-webui is Open WebUI's). Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")
# The first program whose marks a command line holds; the order matters (an app's own Python before "python").
PROGRAMS = (
    ("Chromium", ("chromium", "headless_shell")),
    ("Open WebUI, older release", ("open-webui-0.11",)),
    ("Open WebUI", ("open-webui", "open_webui")),
    ("Letta", ("/letta/",)),
    ("Khoj", ("/khoj/",)),
    ("cosmic-ray", ("cosmic-ray", "cosmic_ray")),
    ("StrykerJS", ("stryker",)),
    ("model server", ("model_server",)),
    ("memchat", ("memchat", "warm_start/zygote.py")),
    ("PostgreSQL", ("postgres",)),
    ("Redis", ("redis-server",)),
    ("Playwright's driver (node)", ("playwright/driver",)),
    ("the suite's pytest processes", ("pytest", "execnet", "exec(eval(sys.stdin")),
    ("the Docker-API engine", ("podman", "conmon")),
    ("installs", ("pip ", "uv ", "apt", "dpkg", "npm")),
)


def program_of(command: str) -> str:
    for name, marks in PROGRAMS:
        if any(mark in command for mark in marks):
            return name
    return "other"


def machine_busy_ticks() -> int:
    with open("/proc/stat", encoding="ascii") as f:
        fields = f.readline().split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7, 8))  # user nice system irq softirq steal


def sample(spent: dict[tuple[int, str], int], commands: dict[tuple[int, str], str]) -> None:
    """Each live process's CPU ticks so far, keyed by pid and start time (a pid is reused)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            key = (int(entry.name), fields[19])
            ticks = int(fields[11]) + int(fields[12])
            if key not in commands:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                commands[key] = command or stat[stat.index("(") + 1:stat.rindex(")")]
            spent[key] = ticks
        except (OSError, ValueError, IndexError):
            continue  # ended between the listing and the read


def measure(command: list[str]) -> tuple[int, dict]:
    spent: dict[tuple[int, str], int] = {}
    commands: dict[tuple[int, str], str] = {}
    sample(spent, commands)
    before = dict(spent)  # what was running before the command: only what it spends from now on counts
    busy0, started = machine_busy_ticks(), time.monotonic()
    process = subprocess.Popen(command)
    while process.poll() is None:
        sample(spent, commands)
        time.sleep(1.0)
    by_program: Counter[str] = Counter()  # in clock ticks
    by_command: Counter[str] = Counter()
    for key, ticks in spent.items():
        by_program[program_of(commands[key])] += ticks - before.get(key, 0)
        by_command[re.sub(r"\d{4,}", "N", commands[key])[:200]] += ticks - before.get(key, 0)
    return process.returncode, {
        "command": command, "wall_s": round(time.monotonic() - started, 1),
        "machine_busy_core_s": round((machine_busy_ticks() - busy0) / HZ, 1),
        "by_program": {k: round(v / HZ, 1) for k, v in by_program.most_common() if v >= HZ / 2},
        "by_command": {k: round(v / HZ, 1) for k, v in by_command.most_common(40)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("reports/cpu-by-program.json"))
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    status, found = measure(command)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(found, indent=1), encoding="utf-8")
    print(f"cpu-by-program: {found['machine_busy_core_s']:.0f} core-seconds of the machine in {found['wall_s']:.0f} s"
          f" ({args.out})")
    for name, seconds in found["by_program"].items():
        print(f"cpu-by-program: {seconds:8.0f}  {name}")
    return status


if __name__ == "__main__":
    sys.exit(main())

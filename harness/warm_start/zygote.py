"""The warm interpreter of harness.warm_start, run by an app's own Python (its virtual environment's): it imports the
libraries it is given once, then forks a copy of itself for every start of the app, and each copy runs the app's
own console script as that script would run, with the start's own arguments, environment, folder and log.

Standard library only: this file runs in the app's interpreter, not the suite's. It speaks JSON lines on its
standard input and output:
  it says       {"ready": true} once the libraries are imported, or {"error": "..."} and exits
  start         {"op": "start", "argv": [...], "env": {...}, "cwd": "...", "log": "..."} -> {"pid": N}
  status        {"op": "status", "pid": N} -> {"returncode": null while it runs, else its code (-N: signal N)}
It ends when its standard input closes; the copies it started are stopped by the suite, each by its own pid.
"""

import importlib
import json
import os
import runpy
import sys


def _say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _serve() -> dict | None:
    """Answer requests until stdin closes (None); in a forked copy, return its start request."""
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "start":
            pid = os.fork()
            if pid == 0:
                return request
            _say({"pid": pid})
        elif request["op"] == "status":
            try:
                pid, status = os.waitpid(request["pid"], os.WNOHANG)
            except ChildProcessError:
                _say({"error": f"no process {request['pid']} of this interpreter"})
                continue
            _say({"returncode": None if pid == 0 else _returncode(status)})
    return None


def _run(request: dict) -> None:
    """Become the app: its folder, exactly its environment, /dev/null in and the log out, then its script."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for source, target in ((null, 0), (log, 1), (log, 2)):
        os.dup2(source, target)
    os.close(null)
    os.close(log)
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as when the script is run: its own folder first
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    # The libraries are imported as the app's script would find them: its folder first, not this one.
    script_dir, preload = sys.argv[1], sys.argv[2:]
    sys.path[0] = script_dir
    try:
        for module in preload:
            importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - any import error is said in one line, and this interpreter ends
        _say({"error": f"{type(e).__name__}: {e}"})
        return
    _say({"ready": True})
    request = _serve()
    if request is not None:
        _run(request)  # the app's own exit (SystemExit, or the end of its script) ends this copy


if __name__ == "__main__":
    main()

"""The warm interpreter of harness.warm_start, run by an app's own Python (its virtual environment's): it imports the
libraries it is given once, then forks a copy of itself for every start of the app, and each copy runs the app's
own console script as that script would run, with the start's own arguments, environment, folder and log.

Standard library only: this file runs in the app's interpreter, not the suite's. It speaks JSON lines on its
standard input and output:
  it says       {"ready": true} once the libraries are imported, or {"error": "..."} and exits
  start         {"op": "start", "argv": [...], "env": {...}, "cwd": "...", "log": "...", "module": null} -> {"pid": N}
                (with "module": argv is `python -m module ...`, and the copy runs that module as -m does)
  status        {"op": "status", "pid": N} -> {"returncode": null while it runs, else its code (-N: signal N)}
A start with "stdio": true instead of "log" takes the copy's standard input, output and error from the three file
descriptors sent right after it on the socket whose number is its first argument (a tool fed and read by the suite).
It ends when its standard input closes; the copies it started are stopped by the suite, each by its own pid.
"""

import importlib
import json
import os
import runpy
import socket
import sys

STDIO = 3  # the file descriptors of a start with "stdio": its standard input, output and error


def _say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _serve(fds: socket.socket) -> dict | None:
    """Answer requests until stdin closes (None); in a forked copy, return its start request."""
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "start":
            stdio = socket.recv_fds(fds, 1, STDIO)[1] if request.get("stdio") else []
            pid = os.fork()
            if pid == 0:
                fds.close()
                return {**request, "fds": stdio}
            for fd in stdio:
                os.close(fd)
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
    if request["fds"]:
        stdio = request["fds"]
    else:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        stdio = [os.open(os.devnull, os.O_RDONLY), log, log]
    for target, source in enumerate(stdio):
        os.dup2(source, target)
    for source in set(stdio):
        if source > 2:
            os.close(source)
    if request.get("module"):
        # As `python -m module args`: the current folder first on the path; runpy puts the module's file in argv[0].
        sys.argv = [request["argv"][0], *request["argv"][3:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        return
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as when the script is run: its own folder first
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    # The libraries are imported as the app's script would find them: its folder first, not this one.
    fds = socket.socket(fileno=int(sys.argv[1]))
    script_dir, preload = sys.argv[2], sys.argv[3:]
    sys.path[0] = script_dir
    try:
        for module in preload:
            importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - any import error is said in one line, and this interpreter ends
        _say({"error": f"{type(e).__name__}: {e}"})
        return
    _say({"ready": True})
    request = _serve(fds)
    if request is not None:
        _run(request)  # the app's own exit (SystemExit, or the end of its script) ends this copy


if __name__ == "__main__":
    main()

import atexit
import os
import sys

from memchat.cli import main

code = main()
# Every command has closed what it opened by now (its with-blocks and finally-clauses ran). What is left is the
# interpreter's teardown of the libraries it loaded, 0.2-0.4 s here for a server or tool that took less than that to
# run: the exit handlers run (a coverage tool's, logging's), the teardown is skipped.
atexit._run_exitfuncs()
for stream in (sys.stdout, sys.stderr):
    if not stream.closed:  # export closes the standard output it wrote to
        stream.flush()
os._exit(code or 0)

"""Replaying a history through a change of the memory store: load a snapshot into the source store, let the app's
own tool make the change, then check every memory and every probe (history.py loads, checks.py compares)."""

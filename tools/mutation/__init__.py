"""Mutation testing of the reference app (make mutation): small changes made mechanically to memchat's memory code
and to its page's script, each run against the scenarios that can reach it. See docs/mutation.md."""

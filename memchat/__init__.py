"""memchat: a small chat app with long-term memory, the acceptance suite's reference system under test."""

__version__ = "0.1.0"

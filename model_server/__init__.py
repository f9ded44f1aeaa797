"""A deterministic, stateless, OpenAI-compatible model server for acceptance tests of chat apps with memory.

`python -m model_server --host 127.0.0.1 --port 0` serves a chat model (`memtest-assistant`) that speaks the
suite's fact language, and hashed n-gram embedding models (`hash-ngram-v1`, `hash-ngram-v2`). It also answers the
prompts Open WebUI sends for its memory review and other tasks (see `memory_review`).
"""

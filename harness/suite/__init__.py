"""The acceptance suite as pytest plugins, wired in by the root conftest.py: the run's life cycle (`run`), the
fixtures that own the support package's life cycles (`fixtures`), and the evidence a failure carries (`evidence`)."""

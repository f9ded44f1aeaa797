"""Commands around the suite, each a console script of the project (pyproject.toml [project.scripts]): the kill
matrix, the flake check, benchmarks, snapshots, long sessions, shards, the step catalogue."""

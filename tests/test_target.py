"""harness.app.target: the shipped target file, one-line refusals of bad ones, and the tools' command lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.app.target import DEFAULT_TARGET, Limits, Recall, Target, TargetError, fill, load_target
from tools import suite_runs

MINIMAL = """\
name = "tiny"
driver = "tiny_driver"

[app]
command = ["{python}", "-m", "tiny", "--port", "{port}"]

[api]
login = "/login"

[tools]
migrate = ["{python}", "-m", "tiny", "migrate", "--from", "{redis_url}", "--batch-size", "{batch_size}"]
"""


def _write(tmp_path: Path, text: str, name: str = "target.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(TargetError) as info:
        load_target(path)
    message = str(info.value)
    assert message and "\n" not in message, f"not one line: {message!r}"
    return message


def test_shipped_target_loads() -> None:
    target = load_target()
    assert target.path == DEFAULT_TARGET
    assert target.name == "memchat"
    assert target.driver == "memchat"
    assert target.recall == Recall(top_k=5, threshold=0.25, memory_listing="every statement")
    assert target.limits == Limits(retention_days=365, session_days=30, longest_message=4000, title_length=80,
                                   preview_length=100,
                                   sign_in_failures=5, sign_in_failures_per="account and address",
                                   sign_in_failures_forgotten_after="a right password", sign_in_lockout_minutes=15,
                                   search_results=100, database_connections=8)
    assert (target.limits.ui_wait_s, target.limits.clock_resolution_s, target.limits.conversation_page) == (5, 0, None)
    assert target.index_kinds["hnsw"] == {"index": "hnsw", "ann-min-rows": "1"}
    assert set(target.index_kinds) >= {"no index", "hnsw", "ivfflat"}
    assert target.start_command[:3] == ["{python}", "-m", "memchat"]
    assert "{port}" in target.start_command
    assert target.health_path == "/healthz"
    assert target.api["login"] == "/api/login"
    assert target.api["messages"] == "/api/conversations/{conversation_id}/messages"
    assert target.locators["login_email"] == {"label": "Email"}
    assert target.locators["send"] == {"role": "button", "name": "Send"}
    assert {"redis_load", "migrate", "embed", "list_faults", "reembed"} <= set(target.tools)
    assert target.env == {}


def test_minimal_target_gets_defaults(tmp_path: Path) -> None:
    target = load_target(_write(tmp_path, MINIMAL))
    assert target.name == "tiny"
    assert target.driver == "tiny_driver"
    assert target.health_path == "/healthz"
    assert target.env == {}
    assert load_target(_write(tmp_path, MINIMAL.replace("[tools]", "[nothing]"), "no-tools.toml")).tools == {}


def test_a_target_without_locators_is_an_app_reached_through_its_api(tmp_path: Path) -> None:
    assert not load_target(_write(tmp_path, MINIMAL)).has_pages
    assert load_target().has_pages


def test_a_target_with_a_web_page_names_every_address_and_locator_the_pages_need(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + '\n[locators]\nsend = { role = "button", name = "Send" }\n')
    message = _refusal(path)
    assert "[api] home_page" in message and "[locators] message_input" in message and "[locators] send" not in message


def test_missing_file(tmp_path: Path) -> None:
    message = _refusal(tmp_path / "absent.toml")
    assert str(tmp_path / "absent.toml") in message
    assert "not found" in message and "--target" in message


def test_bad_toml(tmp_path: Path) -> None:
    path = _write(tmp_path, 'name = "tiny"\n[app\ncommand = []\n')
    message = _refusal(path)
    assert str(path) in message
    assert "not valid TOML" in message
    assert "line 2" in message


@pytest.mark.parametrize(("remove", "key"), [
    ('name = "tiny"\n', "'name'"),
    ('driver = "tiny_driver"\n', "'driver'"),
])
def test_missing_key(tmp_path: Path, remove: str, key: str) -> None:
    assert remove in MINIMAL
    path = _write(tmp_path, MINIMAL.replace(remove, ""))
    message = _refusal(path)
    assert str(path) in message
    assert f"lacks the key {key}" in message


def test_tool_fills_placeholders_including_python() -> None:
    target = load_target()
    command = target.tool("migrate", redis_url="redis://r/1", pg_dsn="postgresql://p/db", batch_size="50",
                          embedder="hash-ngram-v2", index="hnsw", faults="")
    assert command == [sys.executable, "-m", "memchat", "migrate", "--from", "redis://r/1", "--to", "postgresql://p/db",
                       "--batch-size", "50", "--embedder", "hash-ngram-v2", "--index", "hnsw", "--faults", ""]
    assert target.tool("embed", embedder="e1") == [sys.executable, "-m", "memchat", "embed", "--embedder", "e1"]
    assert "{redis_url}" in target.tools["migrate"], "filling must not change the target"


def test_fill_keeps_literal_parts_and_lets_python_be_overridden() -> None:
    assert fill(["{python}", "-c", "pass"]) == [sys.executable, "-c", "pass"]
    assert fill(["{python}", "x"], python="/opt/py") == ["/opt/py", "x"]


def test_unknown_tool(tmp_path: Path) -> None:
    target = load_target(_write(tmp_path, MINIMAL))
    with pytest.raises(TargetError) as info:
        target.tool("reembed")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("target.toml defines no [tools] reembed")


def test_unknown_placeholder(tmp_path: Path) -> None:
    target = load_target(_write(tmp_path, MINIMAL))
    with pytest.raises(TargetError) as info:
        target.tool("migrate", redis_url="redis://r")  # batch_size is not given
    assert "unknown placeholder 'batch_size'" in str(info.value)
    assert "\n" not in str(info.value)
    odd = Target("odd", tmp_path / "odd.toml", "tiny_driver", ["x"], "/h", {}, {}, tools={"t": ["run", "{nope}"]})
    with pytest.raises(TargetError, match="unknown placeholder 'nope'"):
        odd.tool("t")


# ------------------------------------------------------------------------------ malformed input seen in review


def test_wrong_shape_is_a_target_error(tmp_path: Path) -> None:
    _refusal(_write(tmp_path, MINIMAL.replace('command = ["{python}", "-m", "tiny", "--port", "{port}"]',
                                              "command = 3")))


def test_directory_is_a_target_error(tmp_path: Path) -> None:
    _refusal(tmp_path)


def test_positional_placeholder_is_a_target_error() -> None:
    with pytest.raises(TargetError):
        fill(["run", "{}"])


def test_a_bare_name_means_a_shipped_target() -> None:
    assert load_target("memchat").path == DEFAULT_TARGET


def test_unknown_bare_name_lists_the_shipped_targets() -> None:
    message = _refusal(Path("no-such-app"))
    assert "memchat" in message


def test_unknown_driver_is_one_line(tmp_path: Path) -> None:
    from harness.drivers import load_driver
    from harness.drivers.base import DriverError

    with pytest.raises(DriverError) as info:
        load_driver(load_target(_write(tmp_path, MINIMAL)))
    assert "tiny_driver" in str(info.value) and "\n" not in str(info.value)


def test_a_driver_named_by_a_plain_module_name_loads_from_the_python_path(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.drivers import load_driver

    (tmp_path / "team_chat_driver.py").write_text(
        "from harness.drivers.memchat import MemchatDriver\n\n\n"
        "class TeamDriver(MemchatDriver):\n    name = 'team'\n\n\nDRIVER = TeamDriver\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_driver(load_target(_write(tmp_path, MINIMAL.replace("tiny_driver", "team_chat_driver")))).name == "team"
    # a shipped driver of the name comes first, also when a module of that name is on the path
    (tmp_path / "memchat.py").write_text("DRIVER = None\n", encoding="utf-8")
    assert load_driver(load_target(_write(tmp_path, MINIMAL.replace("tiny_driver", "memchat")))).name == "memchat"


def test_a_target_extends_another_table_by_table(tmp_path: Path) -> None:
    _write(tmp_path, MINIMAL, "base.toml")
    child = _write(tmp_path, 'extends = "base.toml"\nname = "child"\n[app]\nhealth = "/up"\n', "child.toml")
    target = load_target(child)
    assert (target.name, target.driver, target.health_path) == ("child", "tiny_driver", "/up")
    assert target.start_command == ["{python}", "-m", "tiny", "--port", "{port}"]
    assert target.api == {"login": "/login"} and target.tools["migrate"][2] == "tiny"


def test_a_loop_of_extends_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, 'extends = "loop.toml"\n' + MINIMAL, "loop.toml")
    assert "extends itself" in _refusal(path)


def test_the_open_webui_targets_load() -> None:
    plain, pgvector = load_target("open-webui"), load_target("open-webui-pgvector")
    assert plain.driver == pgvector.driver == "open-webui"
    assert pgvector.app["database"] == "postgresql" and "database" not in plain.app
    assert pgvector.locators == plain.locators and pgvector.env == plain.env


def test_limits_are_numbers_the_suite_knows_and_retention_may_still_come_from_recall(tmp_path: Path) -> None:
    text = (DEFAULT_TARGET.parent / "memchat.toml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\n[limits]\n")
    base = head + "\n" + rest.partition("\n\n")[2]  # the memchat target without its [limits] table
    older = tmp_path / "older.toml"
    older.write_text(base.replace("[recall]\n", "[recall]\nretention_days = 90\n"), encoding="utf-8")
    assert load_target(older).limits == Limits(retention_days=90)
    for bad, says in (("session_hours = 8", "session_hours is not a limit the suite knows"),
                      ('longest_message = "4000"', "must be a number"),
                      ("ui_wait_s = 0", "would let a step wait forever"),
                      ('sign_in_failures = 5\nsign_in_lockout_minutes = 15\nsign_in_failures_per = "ip"',
                       "sign_in_failures_per = 'ip' must be one of: 'account and address', 'account', 'address'"),
                      ('sign_in_failures = 5\nsign_in_lockout_minutes = 15\nsign_in_failures_forgotten_after = "a day"',
                       "sign_in_failures_forgotten_after = 'a day' must be one of: 'the lockout', 'a right password'"),
                      ("sign_in_failures = 5", "sign_in_failures and sign_in_lockout_minutes go together"),
                      ("sign_in_failures = 2.5\nsign_in_lockout_minutes = 15", "must be a whole number"),
                      ("search_results = 0", "search_results = 0 must be a whole number, at least 1"),
                      ("database_connections = 7.5", "database_connections = 7.5 must be a whole number")):
        path = tmp_path / "bad.toml"
        path.write_text(base + f"\n[limits]\n{bad}\n", encoding="utf-8")
        with pytest.raises(TargetError, match=says):
            load_target(path)



def test_recall_settings_are_typed_with_one_default_each(tmp_path: Path) -> None:
    text = (DEFAULT_TARGET.parent / "memchat.toml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\n[recall]\n")
    base = head + "\n" + rest.partition("\n\n")[2]  # the memchat target without its [recall] table
    path = tmp_path / "recall.toml"
    path.write_text(base, encoding="utf-8")
    assert load_target(path).recall == Recall(top_k=5, threshold=0.0, memory_listing="every statement")
    for bad, says in (("k = 5", "k is not a recall setting the suite knows"),
                      ("top_k = 0", "must be a whole number of memories"),
                      ('memory_listing = "all"', "must be one of: every statement, newest per fact")):
        path.write_text(base + f"\n[recall]\n{bad}\n", encoding="utf-8")
        with pytest.raises(TargetError, match=says):
            load_target(path)

def test_the_reference_app_declares_its_changes_by_name() -> None:
    changes = load_target().changes
    assert {name: c.kind for name, c in changes.items()} == {"redis-to-postgresql": "migration",
                                                             "embedding-model-v1-to-v2": "embedding-model",
                                                             "pgvector-upgrade": "store-upgrade"}
    move = changes["embedding-model-v1-to-v2"]
    assert (move.before_settings, move.embedder_before, move.embedder_after) == (
        {"embedder": "hash-ngram-v1"}, "hash-ngram-v1", "hash-ngram-v2")
    mistakes = changes["redis-to-postgresql"].mistakes
    assert [(m.give or m.feed or m.load, m.named) for m in mistakes[:6]] == [
        (("--index-build-memory", "-1"), "--index-build-memory"), (("--index-build-memory", "99999TB"), "99999TB"),
        (("--index-build-memory", "lots"), "--index-build-memory"),
        (("--from", "unix:///nonexistent/memtest/redis.sock"),
         "memchat: cannot connect to Redis at unix:///nonexistent/memtest/redis.sock: "),
        (("--to", "postgresql://memtest@/none?host=/nonexistent/memtest"),
         "memchat: cannot connect to PostgreSQL at postgresql://memtest@/none?host=/nonexistent/memtest: "),
        (("--batch-size", "0"), "--batch-size must be at least 1")]
    assert [(m.give or m.feed or m.load, m.said) for m in mistakes[6:]] == [
        *[(f"targets/memchat.mistakes/{name}.jsonl", f"memchat: -:2: {said}") for name, said in (
            ("a-vector-cut-short", "embedding_f32 holds 2 bytes, not a whole number of float32 values"),
            ("a-vector-with-a-stray-character", "embedding_f32 is not base64"),
            ("a-vector-one-dimension-short", "embedding has 255 dimensions, not the embedder's 256"),
            ("a-vector-holding-infinity", "embedding holds a value that is not a finite number"),
            ("a-record-with-both-vectors", "give either embedding or embedding_f32, not both"),
            ("a-vector-of-words", "embedding must be a list of numbers or null"),
            ("a-vector-quoted-as-text", "embedding must be a list of numbers or null"),
            ("a-vector-of-one-number-lists", "embedding must be a list of numbers or null"),
            ("a-record-without-its-owner", '"id" and "user_id" must be strings ("user_id" is missing)'),
            ("a-record-of-an-unknown-model", "embedder 'hash-ngram-v9' is unknown; known: hash-ngram-v1, "
                                             "hash-ngram-v2"),
            ("a-line-that-is-not-json", "not valid JSON (Expecting ',' delimiter)"),
            ("a-creation-time-that-is-not-a-time", "created_at 'last Tuesday' is not ISO-8601 with a time zone"))],
        (("--file", "targets/memchat.mistakes/no-such-records.jsonl"),
         "memchat: cannot read targets/memchat.mistakes/no-such-records.jsonl: No such file or directory"),
        (("--timezone", "Mars/Olympus_Mons"),
         "memchat: --timezone: time zone 'Mars/Olympus_Mons' is unknown; give an IANA name such as Europe/Berlin")]
    assert all(m.named == m.said for m in mistakes[6:])
    assert "mistakes" not in changes["redis-to-postgresql"].options
    assert [e.give for e in changes["redis-to-postgresql"].edges] == [
        ("--index-graph-rows", "0"), ("--index-graph-rows", "1"), ("--batch-size", "1"),
        ("--index-build-memory", "1MB"), ("--index-build-memory", "auto")]
    assert "edges" not in changes["redis-to-postgresql"].options
    migration = changes["redis-to-postgresql"]
    assert [(v.index_kind, v.memories, v.give) for v in migration.volumes] == [
        ("ivfflat", 33000, ()), ("hnsw", 4200, ("--index-graph-rows", "2500")),
        ("no index", 1000, ("--index-graph-rows", "300"))]
    assert migration.volume_for("hnsw") is migration.volumes[1] and migration.volume_for("flat") is None
    assert "volumes" not in migration.options
    assert changes["embedding-model-v1-to-v2"].volumes == ()
    assert [(v.index_kind, v.memories, v.give, v.short) for v in migration.build_memory] == [
        ("hnsw", 12000, (), ("--index-build-memory", "18MB"))]
    assert migration.build_volume_for("hnsw") is migration.build_memory[0]
    assert migration.build_volume_for("ivfflat") is None and "build_memory" not in migration.options


@pytest.mark.parametrize("name", ["open-webui", "open-webui-pgvector"])
def test_open_webui_declares_its_upgrade_and_its_embedding_model_change_on_both_stores(name: str) -> None:
    changes = load_target(name).changes
    assert {n: c.kind for n, c in changes.items()} == {"upgrade-0.11.4-to-0.12.4": "upgrade",
                                                       "embedding-model-v1-to-v2": "embedding-model"}
    upgrade = changes["upgrade-0.11.4-to-0.12.4"]
    assert upgrade.before_settings == {
        "embedder": "hash-ngram-v1",
        "release_command": ".tools/open-webui-0.11.4/bin/open-webui serve --host 127.0.0.1 --port {port}"}
    assert upgrade.embedder_after == "hash-ngram-v1"


@pytest.mark.parametrize(("table", "message"), [
    ('[changes.x]\nkind = "teleport"',
     "[changes.\"x\"] kind = 'teleport' is not one of migration, embedding-model, upgrade, store-upgrade"),
    ('[changes.x]\nkind = "embedding-model"\nfrom = "a"', '[changes."x"] (embedding-model) needs to'),
    ('[changes.x]\nkind = "upgrade"\nrelease = "1"\nembedder = "e"', '[changes."x"] (upgrade) needs command'),
    ('[changes.x]\nkind = "upgrade"\nrelease = "1"\nembedder = "e"\ncommand = "old serve"',
     '[changes."x"] command must listen on {port}'),
    ('[changes]\nx = "migration"', '[changes."x"] must be a table with a kind'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.mistakes]\n"typo" = { give = "-x" }',
     '[changes."x".mistakes] "typo" needs one of give (the words added to the command, a list of strings), feed'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.mistakes]\n'
     '"both" = { give = ["-x"], load = ["-y"], named = "x" }',
     '[changes."x".mistakes] "both" needs one of give'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.mistakes]\n'
     '"apart" = { load = ["-y"], named = "x", said = "memchat: y" }',
     '[changes."x".mistakes] "apart" needs one of give'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.mistakes]\n'
     '"lost" = { feed = "no/such.jsonl", named = "x" }',
     '[changes."x".mistakes] "lost" feed = \'no/such.jsonl\': no such file'),
    ('[changes.x]\nkind = "embedding-model"\nfrom = "a"\nto = "b"\n'
     '[changes.x.mistakes]\n"typo" = { give = ["-x"], named = "-x" }',
     '[changes."x"] mistakes: only a migration\'s tool is run with them'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.edges]\n"zero" = { give = "-x" }',
     '[changes."x".edges] "zero" needs give (the words added to the command, a list of strings) only'),
    ('[changes.x]\nkind = "embedding-model"\nfrom = "a"\nto = "b"\n[changes.x.edges]\n"zero" = { give = ["-x"] }',
     '[changes."x"] edges: only a migration\'s tool is run with them'),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n'
     '[changes.x.volumes]\nflat = { memories = "many" }',
     '[changes."x".volumes] "flat" needs memories (a whole number, at least 1) and may give words'),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n'
     '[changes.x.volumes]\nflat = { memories = 10, lists = 3 }',
     '[changes."x".volumes] "flat" needs memories (a whole number, at least 1) and may give words'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n[changes.x.volumes]\nhnsw = { memories = 10 }',
     "[changes.\"x\".volumes] names 'hnsw', which is not one of the target's [index_kinds]: none declared"),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "embedding-model"\nfrom = "a"\nto = "b"\n'
     '[changes.x.volumes]\nflat = { memories = 10 }',
     '[changes."x"] volumes: only a migration\'s tool is run with them'),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n'
     '[changes.x.build_memory]\nflat = { memories = 10 }',
     '[changes."x".build_memory] "flat" needs memories (a whole number, at least 1), short (the words'),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "embedding-model"\nfrom = "a"\nto = "b"\n'
     '[changes.x.build_memory]\nflat = { memories = 10, short = ["-x"] }',
     '[changes."x"] build_memory: only a migration\'s tool is run with it'),
])
def test_a_change_declared_wrongly_is_refused_in_one_line(tmp_path: Path, table: str, message: str) -> None:
    assert message in _refusal(_write(tmp_path, MINIMAL + "\n" + table + "\n"))


def test_a_change_no_target_declares_is_named_with_those_it_does() -> None:
    with pytest.raises(TargetError, match=r"declares no change 'teleport' under \[changes\]; it declares: "
                                          r"redis-to-postgresql, embedding-model-v1-to-v2, pgvector-upgrade$"):
        load_target().change("teleport")


def test_a_target_says_how_long_its_page_may_take_to_show_a_thing() -> None:
    """Open WebUI renders much in the browser: its target gives its page longer than Playwright's 5 s, which memchat
    keeps; a locator may still ask for longer than its target."""
    from pages.base import BasePage

    assert load_target("open-webui-pgvector").limits.ui_wait_s == 20  # inherited by extends
    assert load_target("memchat").limits.ui_wait_s == 5
    page = BasePage(None, "http://app", {"slow": {"css": "#s", "shows_within_s": 30}, "plain": {"css": "#p"}},  # type: ignore[arg-type]
                    {})
    assert page.shows_within_ms("slow") == 30000
    assert page.shows_within_ms("plain") is None


def test_the_sizes_of_history_each_target_replays() -> None:
    memchat = load_target()
    assert memchat.history_sizes == (1000, 100_000)
    assert memchat.changes["redis-to-postgresql"].history_sizes == (1000, 10_000, 100_000, 1_000_000)
    assert memchat.replays_history_of(1_000_000, "redis-to-postgresql")
    assert not memchat.replays_history_of(1_000_000, "embedding-model-v1-to-v2")  # the target's own sizes
    for name in ("open-webui", "open-webui-pgvector"):  # the PostgreSQL configuration extends the first
        target = load_target(name)
        assert target.replays_history_of(300) and not target.replays_history_of(1000)


def test_a_target_without_replay_settings_replays_every_size(tmp_path: Path) -> None:
    target = load_target(_write(tmp_path, MINIMAL))
    assert target.history_sizes == () and target.replays_history_of(300) and target.replays_history_of(100_000)


@pytest.mark.parametrize(("table", "message"), [
    ("[replay]\nhistory_sizes = 300", "[replay] history_sizes = 300 must be a list of whole numbers of memories"),
    ('[replay]\nhistory_sizes = ["1,000"]', "must be a list of whole numbers of memories, e.g. [1000, 100000]"),
    ("[replay]\nhistory_sizes = [0]", "must be a list of whole numbers"),
    ("[replay]\nsizes = [300]", "[replay] sizes is not a replay setting the suite knows; known: history_sizes"),
])
def test_replay_settings_of_the_wrong_shape_are_refused_in_one_line(tmp_path: Path, table: str, message: str) -> None:
    assert message in _refusal(_write(tmp_path, MINIMAL + "\n" + table + "\n"))


def test_each_change_is_searched_through_the_index_kinds_it_names_else_every_one_declared(tmp_path: Path) -> None:
    memchat = load_target()
    assert list(memchat.index_kinds) == ["no index", "hnsw", "ivfflat"]  # no fault switched on by a declaration
    assert memchat.changes["pgvector-upgrade"].index_kinds == ("no index", "hnsw", "ivfflat")
    assert memchat.changes["redis-to-postgresql"].index_kinds == ("hnsw", "ivfflat", "no index")
    assert memchat.searches_through("ivfflat", "redis-to-postgresql")
    assert not memchat.searches_through("hnsw", "embedding-model-v1-to-v2")
    assert load_target("open-webui").changes["embedding-model-v1-to-v2"].index_kinds == ()


@pytest.mark.parametrize(("table", "message"), [
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\nhistory_sizes = [0]',
     '[changes."x"] history_sizes = [0] must be a list of whole numbers of memories'),
    ('[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\nindex_kinds = ["hnsw"]',
     "[changes.\"x\"] index_kinds names 'hnsw', which is not one of the target's [index_kinds]: none declared"),
    ('[index_kinds]\nflat = { index = "none" }\n\n[changes.x]\nkind = "migration"\nbatch_size = 5\nembedder = "e"\n'
     'index_kinds = "flat"', '[changes."x"] index_kinds = \'flat\' must be a list of names of the target\'s'),
])
def test_what_a_change_is_replayed_with_is_refused_in_one_line_when_wrong(tmp_path: Path, table: str,
                                                                          message: str) -> None:
    assert message in _refusal(_write(tmp_path, MINIMAL + "\n" + table + "\n"))


REPLAY = ("features/replay_through_changes.feature::"
          "test_every_memory_of_a_history_is_recalled_after_the_change_memory_by_memory")
INDEXED = ("features/replay_through_changes.feature::"
           "test_a_teams_own_memories_imported_from_outside_are_recalled_after_the_change_through_each_index_kind")


@pytest.mark.parametrize(("target", "cases"), [
    ("memchat", ["embedding-model-v1-to-v2-1,000", "pgvector-upgrade-1,000", "redis-to-postgresql-1,000"]),
    ("open-webui", ["embedding-model-v1-to-v2-300", "upgrade-0.11.4-to-0.12.4-300"]),
    ("letta", ["no change declared-300"]),  # declares no change: one case says so
])
def test_the_replay_runs_each_declared_change_at_the_sizes_its_target_replays(target: str, cases: list[str]) -> None:
    """What the kill matrix expects is what is collected: a size a target does not replay is never collected."""
    collected = suite_runs.collect(["features", "--target", target, "-k", "memory_by_memory"])
    assert collected == [f"{REPLAY}[{case}]" for case in cases]


@pytest.mark.parametrize(("target", "cases"), [
    ("memchat", ["pgvector-upgrade-hnsw", "pgvector-upgrade-ivfflat", "pgvector-upgrade-no index",
                 "redis-to-postgresql-hnsw", "redis-to-postgresql-ivfflat", "redis-to-postgresql-no index"]),
    ("open-webui", ["embedding-model-v1-to-v2-no index kind declared",  # which skips in one line
                    "upgrade-0.11.4-to-0.12.4-no index kind declared"]),
    ("letta", ["no change declared-no index kind declared"]),
])
def test_a_scenario_per_change_and_index_kind_runs_the_kinds_each_change_is_searched_through(
        target: str, cases: list[str]) -> None:
    only = "imported_from_outside and through_each_index_kind"  # not the answers' scenario, also per index kind
    collected = suite_runs.collect(["features", "--target", target, "-k", only])
    assert collected == [f"{INDEXED}[{case}]" for case in cases]


def test_only_the_reference_app_declares_how_much_one_search_returns_and_how_many_connections_it_holds() -> None:
    limits = load_target("memchat-api").limits  # inherited by extends
    assert (limits.search_results, limits.database_connections) == (100, 8)
    for name in ("open-webui", "open-webui-pgvector", "letta"):
        assert (load_target(name).limits.search_results, load_target(name).limits.database_connections) == (
            None, None), name


def test_only_the_reference_app_declares_sign_in_throttling() -> None:
    assert load_target("memchat-api").limits.sign_in_failures == 5  # inherited by extends
    for name in ("open-webui", "open-webui-pgvector", "letta"):
        assert load_target(name).limits.sign_in_failures is None, name


def test_write_bodies_are_tables_for_paths_of_the_api(tmp_path: Path) -> None:
    assert load_target("memchat").write_bodies["memory"] == {"text": "{text}"}
    text = (DEFAULT_TARGET.parent / "memchat.toml").read_text(encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(text.replace('settings = { memory = false }', 'nowhere = { memory = false }'), encoding="utf-8")
    with pytest.raises(TargetError, match=r"\[write_bodies\] nowhere must be a table .* for a path of \[api\]"):
        load_target(path)

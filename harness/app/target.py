"""The app under test, described by one configuration file: which driver speaks to it, how to start it, its API
paths, its locators, its recall settings and its command-line tools. Pointing the suite at a team's own app means
writing such a file (and, where its API differs from every shipped driver, a driver); steps stay unchanged."""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.app.changes import Change, ChangeError, parse_changes, parse_sizes
from harness.warm_start import WarmStart, WarmStartError, warm_start_for

TARGETS = Path(__file__).resolve().parents[2] / "targets"
DEFAULT_TARGET = TARGETS / f"{(TARGETS / 'DEFAULT').read_text(encoding='utf-8').strip()}.toml"  # the shipped app


class TargetError(Exception):
    pass


LONG_MESSAGE = 4000  # the long messages typed to an app that declares no longest message
UI_WAIT_S = 5.0  # Playwright's own expect timeout
# Each statement a memory of its own; one memory per fact, a correction replacing it in its place; or one per fact,
# a correction deleting it and adding a new memory (listed last, as the newest)
MEMORY_LISTINGS = ("every statement", "newest per fact", "newest per fact, as a new memory")
# What an app counts wrong passwords by before it locks sign-in ([limits] sign_in_failures_per).
THROTTLE_KEYS = ("account and address", "account", "address")
# What makes an app forget the wrong passwords it counted ([limits] sign_in_failures_forgotten_after).
FORGETTING_FAILURES = ("the lockout", "a right password")


def _limit(doc: str, default: float | None = None) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Limits:
    """The app's promises with a time or a size in them ([limits]): the suite checks each just inside and just
    outside its edge. None: the app declares none."""

    retention_days: float | None = _limit("memories are forgotten this many days after they were told")
    session_days: float | None = _limit("a sign-in lasts this many days")
    longest_message: int | None = _limit("the longest message (in characters) the app accepts; longer ones are "
                                         "refused")
    longest_fact: int | None = _limit("the longest fact the generated sessions tell (a known defect of the app cuts "
                                      "longer ones)")
    conversation_page: int | None = _limit("conversations the app lists per page (0 or absent: all at once)")
    title_length: int | None = _limit("the conversation list shows each conversation's first message, cut to this "
                                      "many characters, as its title (absent: titles are not compared)")
    preview_length: int | None = _limit("the conversation list shows each conversation's last message, cut to this "
                                        "many characters, under its title (absent: previews are not compared)")
    memory_page: int | None = _limit("memories the app lists per page (0 or absent: all at once)")
    clock_resolution_s: float = _limit("the resolution of the app's timestamps: items made within it may be listed "
                                       "either way", 0.0)
    ui_wait_s: float = _limit("the longest the app's page may take to show what a step waits for, on a busy machine "
                              "(Playwright's expect timeout; 5 s when absent)", UI_WAIT_S)
    sign_in_failures: int | None = _limit("wrong passwords after which the app locks sign-in (absent: the app declares "
                                          "no sign-in throttling)")
    sign_in_failures_per: str = field(default=THROTTLE_KEYS[0], metadata={
        "doc": f"what the wrong passwords are counted by: {' or '.join(map(repr, THROTTLE_KEYS))}"})
    sign_in_failures_forgotten_after: str = field(default=FORGETTING_FAILURES[0], metadata={
        "doc": "what makes the app forget the wrong passwords it counted: "
               f"{' or '.join(map(repr, FORGETTING_FAILURES))} (which also clears them; absent: the lockout only)"})
    sign_in_lockout_minutes: float | None = _limit("how long a locked sign-in stays locked (by the app's clock)")
    search_results: int | None = _limit("the most memories one search of a user's memory returns (absent: a search "
                                        "for more than the app recalls for a question is not checked)")
    database_connections: int | None = _limit("the most connections the app holds to its database at once, however "
                                              "many users it serves (absent: not checked)")

    @property
    def longest_to_type(self) -> int:
        """The longest message to type: the app's declared limit, else LONG_MESSAGE."""
        return self.longest_message or LONG_MESSAGE


@dataclass(frozen=True)
class Recall:
    """How the app recalls memories for a question ([recall])."""

    top_k: int = 5  # memories recalled for one question
    threshold: float = 0.0  # the similarity below which the app recalls nothing
    memory_listing: str = MEMORY_LISTINGS[0]  # each statement a memory of its own, or one memory per fact (above)


# The app's documented choices where apps differ in what taking memory back does ([forgetting]): each choice's
# allowed answers, what the suite then checks, and the source the target file must cite for it.
FORGETTING_CHOICES = {
    "conversation_deleted": ("kept", "deleted"),  # the memories told in a deleted conversation
    "memory_on_again": ("used again", "gone"),  # the memories from before memory was turned off, once it is on again
    "dropped_reply": ("not remembered", "remembered"),  # the facts of a turn whose reply never reached the page
    "memory_edited": ("kept in its place", "made the newest"),  # an edited memory, in the user's list oldest first
    # A message sent while the browser is offline: the page says it was not sent, or sends it once the page is back
    # online (an outbox); either way it is stored once at most
    "offline_send": ("refused", "sent once back online"),
}


@dataclass(frozen=True)
class Choice:
    """One documented choice of the app: which answer, and where the app's documentation or code says so."""

    memories: str
    source: str


@dataclass(frozen=True)
class Forgetting:
    """What the app does with what users take back where apps differ ([forgetting]); None: not declared, and the
    scenarios that need the choice skip with one line."""

    conversation_deleted: Choice | None = None
    memory_on_again: Choice | None = None
    dropped_reply: Choice | None = None
    memory_edited: Choice | None = None  # not declared: kept in its place, as most apps keep an edited row
    offline_send: Choice | None = None  # (its `memories`: what becomes of the message)

    @property
    def edit_makes_newest(self) -> bool:
        return self.memory_edited is not None and self.memory_edited.memories == "made the newest"


@dataclass(frozen=True)
class KnownDefect:
    """How a scenario fails on the app, and why: at the Gherkin line `step` (as written in the feature file, an
    outline's <placeholders> included) with a failure message that `match` finds; or, for a generated session, a
    difference of the read `read` (what was compared: "memories", "answer"...) that `match` finds in its description."""

    why: str
    match: str
    step: str = ""
    read: str = ""
    or_step: str = ""  # a defect that shows at one of two steps, as the app's timing has it (said in its why)

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(s for s in (self.step, self.or_step) if s)

    def matches(self, message: str) -> bool:
        return re.search(self.match, message, re.S) is not None

    def declared(self) -> str:
        """The declaration in a line: where and what it must fail with."""
        where = ("at the step " + " or ".join(f"'{s}'" for s in self.steps)) if self.step else \
            f"in the read of {self.read}"
        return f"{where}, with a message matching /{self.match}/"


# The promises of [limits] an app's operators may set otherwise ([operator_settings]: each by the app setting that
# sets it, `--<setting> <value>` at its start): the suite starts it with another value and checks that one instead.
OPERATOR_SETTINGS = {"retention_days": "how many days memories are kept (the app setting that takes a number of "
                                       "days)",
                     "recall_threshold": "the least similarity to what is asked a memory needs to be recalled or "
                                         "found ([recall] threshold; the app setting that takes that number)"}


def _operator_settings(data: dict) -> dict[str, str]:
    """[operator_settings]: each promise its operators may set, known ones only, by the name of the app's setting."""
    table = dict(data.get("operator_settings", {}))
    for key, value in table.items():
        if key not in OPERATOR_SETTINGS:
            raise TargetError(f"[operator_settings] {key} is not a promise the suite lets operators set; known: "
                              f"{', '.join(OPERATOR_SETTINGS)}")
        if not isinstance(value, str) or not value.strip():
            raise TargetError(f"[operator_settings] {key} = {value!r} must be the name of the app's setting that sets "
                              f"it ({OPERATOR_SETTINGS[key]})")
    return {k: str(v) for k, v in table.items()}


RESTATE = ("restate it as a table: [known_defects.\"<file>.feature: <title>\"] with step (the Gherkin line it fails "
           "at, as written), match (a regular expression its failure message matches) and why; a generated "
           "session's names read and match instead of step (docs/targets.md)")


def _known_defects(data: dict, path: Path) -> dict[str, KnownDefect]:
    """[known_defects]: each a table (step, match, why; or read, match, why); an empty string takes back one that a
    file this one `extends` declares."""
    defects = {}
    for scenario, entry in data.get("known_defects", {}).items():
        where = f"{path.name} [known_defects] {scenario!r}"
        if entry == "":
            continue
        if not isinstance(entry, dict):
            raise TargetError(f"{where} is a plain string: {RESTATE}")
        unknown = set(entry) - {"step", "or_step", "match", "why", "read"}
        if unknown:
            raise TargetError(f"{where} has {', '.join(sorted(unknown))}, which a known defect does not take: "
                              "step, match, why (or read, match, why)")
        missing = [k for k in ("match", "why") if not str(entry.get(k, "")).strip()]
        if missing or bool(entry.get("step")) == bool(entry.get("read")):
            lacks = ", ".join(missing) or "one of step (a scenario's line) and read (a generated session's)"
            raise TargetError(f"{where} lacks {lacks}: {RESTATE}")
        try:
            re.compile(str(entry["match"]))
        except re.error as e:
            raise TargetError(f"{where}: match {entry['match']!r} is not a regular expression ({e})") from None
        defects[str(scenario)] = KnownDefect(str(entry["why"]), str(entry["match"]), str(entry.get("step", "")).strip(),
                                             str(entry.get("read", "")).strip(), str(entry.get("or_step", "")).strip())
    return defects


def _forgetting(data: dict) -> Forgetting:
    """[forgetting]: each choice a table `{ memories = "<answer>", source = "<where the app says so>" }`."""
    table = dict(data.get("forgetting", {}))
    unknown = sorted(set(table) - set(FORGETTING_CHOICES))
    if unknown:
        raise TargetError(f"[forgetting] {unknown[0]} is not a choice the suite knows; known: "
                          f"{', '.join(FORGETTING_CHOICES)}")
    choices = {}
    for name, value in table.items():
        answers = FORGETTING_CHOICES[name]
        if not isinstance(value, dict) or value.get("memories") not in answers or not str(value.get("source", "")):
            raise TargetError(f'[forgetting] {name} must be {{ memories = "{answers[0]}" or "{answers[1]}", source = '
                              '"<the line of the app\'s documentation or code that says so>" }}')
        choices[name] = Choice(str(value["memories"]), str(value["source"]))
    return Forgetting(**choices)


@dataclass(frozen=True)
class Target:
    name: str
    path: Path
    driver: str  # a shipped driver's name (harness/drivers/<name>.py), or "package.module" of a team's own
    start_command: list[str]
    health_path: str
    api: dict[str, str]
    locators: dict[str, dict[str, Any]]
    tools: dict[str, list[str]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    app: dict[str, Any] = field(default_factory=dict)  # the whole [app] table, for the driver's own keys
    recall: Recall = field(default_factory=Recall)
    limits: Limits = field(default_factory=Limits)
    # Index kinds by name ("hnsw", "no index"...) -> the app settings that make every owner's search use it
    index_kinds: dict[str, dict[str, str]] = field(default_factory=dict)
    # The app's fault catalogue: each fault -> the scenarios that must fail with it on ("<file>.feature: <title>")
    fault_scenarios: dict[str, list[str]] = field(default_factory=dict)
    # Scenarios that fail on this app because of a defect or a documented design choice of the app: where and why
    known_defects: dict[str, KnownDefect] = field(default_factory=dict)
    # What the app does with what users take back, where apps differ (harness.app.target.Forgetting)
    forgetting: Forgetting = field(default_factory=Forgetting)
    # The changes the replay scenarios put the app through, by name (harness.app.changes)
    changes: dict[str, Change] = field(default_factory=dict)
    # The sizes of history the replay scenarios run on this app ([replay] history_sizes); empty: every size
    history_sizes: tuple[int, ...] = ()
    # The promises of [limits] its operators may set otherwise, by the app setting that sets each ([operator_settings])
    operator_settings: dict[str, str] = field(default_factory=dict)

    # The bodies of the app's own writes by [api] name ([write_bodies]), for the hostile users' tampering
    write_bodies: dict[str, Any] = field(default_factory=dict)
    web_page: bool = True  # false: the users of this target speak through the app's API, even if it has pages
    # [accounts] email_domain: where the app refuses the reserved .test addresses the suite writes, the domain they
    # are given under instead ("ana@x.test" -> "ana@x.test.example.com"); "" keeps them as written
    email_domain: str = ""
    # The libraries its app's starts import once per run and fork from ([app] preload: harness.warm_start)
    warm_start: WarmStart | None = None

    @property
    def has_pages(self) -> bool:
        """Whether the app has a web page the suite drives (its locators); else users speak through its API."""
        return self.web_page and bool(self.locators)

    @property
    def cannot_fail_sends(self) -> str:
        """One line on what the target lacks for a send that fails on the way (pages.network_failures: the page's
        chat request is found by its [api] messages address, the page's error by the send_error locator), or ""."""
        missing = [what for what, declared in (("[api] messages (the address the page sends a turn to)",
                                                "messages" in self.api),
                                               ("locator send_error (what the page shows for a message not sent)",
                                                "send_error" in self.locators)) if not declared]
        return f"a send failing on the way needs the {self.name} target's {' and '.join(missing)}" if missing else ""

    def replays_history_of(self, size: int, change: str = "") -> bool:
        """Whether the replay scenarios put a history of `size` memories through this app's change (its own sizes,
        else the target's), or through its changes."""
        if change:
            return self.change(change).replays_history_of(size)
        return not self.history_sizes or size in self.history_sizes

    def searches_through(self, index_kind: str, change: str) -> bool:
        """Whether the scenarios run once per index kind search through this kind after this change."""
        return index_kind in self.change(change).index_kinds

    def tool(self, name: str, **values: str) -> list[str]:
        """The command line of one of the app's tools (migrate, redis-load, ...), with {placeholders} filled in."""
        if name not in self.tools:
            raise TargetError(f"{self.path.name} defines no [tools] {name}; add it to use this scenario")
        return fill(self.tools[name], **values)

    def change(self, name: str) -> Change:
        """A change this app declares, by the name a scenario uses, or one line naming those it declares."""
        if name not in self.changes:
            declared = ", ".join(self.changes) or "none"
            raise TargetError(f"{self.path.name} declares no change {name!r} under [changes]; it declares: {declared}")
        return self.changes[name]

    def path_of(self, name: str, **values: str) -> str:
        if name not in self.api:
            raise TargetError(f"{self.path.name} defines no [api] {name}; add it")
        return self.api[name].format(**values)


def fill(template: list[str], **values: str) -> list[str]:
    values = {"python": sys.executable, **values}
    try:
        return [part.format(**values) for part in template]
    except KeyError as e:
        raise TargetError(f"unknown placeholder {e} in command {template}") from None
    except (IndexError, ValueError) as e:
        raise TargetError(f"bad placeholder in command {template}: {e}; use {{name}} placeholders") from None


def resolve(value: str | Path | None) -> Path:
    """`--target open-webui` means targets/open-webui.toml; anything else is a path."""
    if value is None:
        return DEFAULT_TARGET
    text = str(value)
    if "/" not in text and not text.endswith(".toml"):
        return TARGETS / f"{text}.toml"
    return Path(text)


def _merged(base: dict, override: dict) -> dict:
    """`override` over `base`, table by table."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """The file's tables, over those of the file it `extends` (a path relative to it), if any."""
    if path in seen:
        raise TargetError(f"target file {path} extends itself through {seen[-1]}; remove the loop")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if "extends" not in data:
        return data
    base = path.parent / str(data.pop("extends"))
    return _merged(_read(base, (*seen, path)), data)


LIMITS = {f.name: f.metadata["doc"] for f in fields(Limits)}


def _limits(data: dict) -> Limits:
    """[limits], numbers only, known keys only; `retention_days` may still come from [recall] (older targets)."""
    limits = dict(data.get("limits", {}))
    if "retention_days" not in limits and "retention_days" in data.get("recall", {}):
        limits["retention_days"] = data["recall"]["retention_days"]
    for key, value in limits.items():
        if key not in LIMITS:
            raise TargetError(f"[limits] {key} is not a limit the suite knows; known: {', '.join(LIMITS)}")
        if key == "sign_in_failures_forgotten_after":
            if value not in FORGETTING_FAILURES:
                raise TargetError(f"[limits] sign_in_failures_forgotten_after = {value!r} must be one of: "
                                  f"{', '.join(map(repr, FORGETTING_FAILURES))}")
            continue
        if key == "sign_in_failures_per":
            if value not in THROTTLE_KEYS:
                raise TargetError(f"[limits] sign_in_failures_per = {value!r} must be one of: "
                                  f"{', '.join(map(repr, THROTTLE_KEYS))}")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise TargetError(f"[limits] {key} = {value!r} must be a number of at least 0 ({LIMITS[key]})")
    if (limits.get("sign_in_failures") is None) != (limits.get("sign_in_lockout_minutes") is None):
        raise TargetError("[limits] sign_in_failures and sign_in_lockout_minutes go together: declare both, or neither "
                          "(no sign-in throttling)")
    if not isinstance(limits.get("sign_in_failures", 1), int) or limits.get("sign_in_failures") == 0:
        raise TargetError(f"[limits] sign_in_failures = {limits['sign_in_failures']!r} must be a whole number of wrong "
                          "passwords, at least 1")
    for key in ("search_results", "database_connections"):
        if key in limits and (not isinstance(limits[key], int) or limits[key] < 1):
            raise TargetError(f"[limits] {key} = {limits[key]!r} must be a whole number, at least 1 ({LIMITS[key]})")
    if limits.get("ui_wait_s", 1) == 0:  # Playwright reads a timeout of 0 as none: a step would wait forever
        raise TargetError("[limits] ui_wait_s = 0 would let a step wait forever; give a number of seconds, like 15")
    return Limits(**limits)


def _recall(data: dict) -> Recall:
    """[recall]: top_k, threshold, memory_listing (and retention_days, read as a limit, from older targets)."""
    recall = {k: v for k, v in data.get("recall", {}).items() if k != "retention_days"}
    known = [f.name for f in fields(Recall)]
    unknown = sorted(set(recall) - set(known))
    if unknown:
        raise TargetError(f"[recall] {unknown[0]} is not a recall setting the suite knows; known: {', '.join(known)}")
    if recall.get("memory_listing", MEMORY_LISTINGS[0]) not in MEMORY_LISTINGS:
        raise TargetError(f"[recall] memory_listing = {recall['memory_listing']!r} must be one of: "
                          f"{', '.join(MEMORY_LISTINGS)}")
    top_k = recall.get("top_k", Recall.top_k)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise TargetError(f"[recall] top_k = {top_k!r} must be a whole number of memories, at least 1")
    return Recall(top_k, float(recall.get("threshold", Recall.threshold)),
                  str(recall.get("memory_listing", Recall.memory_listing)))


def _history_sizes(data: dict) -> tuple[int, ...]:
    """[replay] history_sizes: the Examples sizes of the replay this app runs, whole numbers of at least 1."""
    replay = dict(data.get("replay", {}))
    unknown = sorted(set(replay) - {"history_sizes"})
    if unknown:
        raise TargetError(f"[replay] {unknown[0]} is not a replay setting the suite knows; known: history_sizes")
    try:
        return parse_sizes(replay.get("history_sizes", []), "[replay] history_sizes")
    except ChangeError as e:
        raise TargetError(str(e)) from None


def _write_bodies(data: dict) -> dict[str, Any]:
    """[write_bodies]: the body of each of the app's writes, by the [api] name of its path (a table)."""
    bodies = dict(data.get("write_bodies", {}))
    api = dict(data.get("api", {}))
    for name, body in bodies.items():
        if name not in api or not isinstance(body, dict):
            raise TargetError(f"[write_bodies] {name} must be a table (the body of a write) for a path of [api]; "
                              f"[api] has: {', '.join(api) or 'nothing'}")
    return bodies


# What the page objects need of a target with a web page: its addresses, and the locators of every screen.
PAGE_ADDRESSES = ("home_page", "login_page", "conversation_page")
PAGE_LOCATORS = ("login_email", "login_password", "login_submit", "current_user", "logout", "conversation_list",
                 "conversation_item", "new_conversation", "messages", "message", "message_text", "assistant_message",
                 "message_input", "send")


def check_pages(target: Target) -> Target:
    """A target with locators has a web page: every address and locator the page objects need, or one line."""
    if not target.locators:
        return target
    missing = [f"[api] {a}" for a in PAGE_ADDRESSES if a not in target.api]
    missing += [f"[locators] {n}" for n in PAGE_LOCATORS if n not in target.locators]
    if missing:
        raise TargetError(f"target file {target.path} has locators (a web page) but lacks {', '.join(missing)}; "
                          "add them, or drop [locators] for an app the suite reaches through its API only")
    return target


def load_target(path: str | Path | None = None) -> Target:
    path = resolve(path)
    try:
        data = _read(path)
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in TARGETS.glob("*.toml")))
        raise TargetError(f"target file {path} not found; pass --target with an existing file or one of: "
                          f"{known}") from None
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"target file {path} is not valid TOML: {e}") from None
    except OSError as e:
        raise TargetError(f"target file {path} cannot be read: {e.strerror}") from None
    try:
        app = dict(data["app"])
        return check_pages(Target(
            name=data["name"], path=path, driver=data["driver"], start_command=list(app.get("command", [])),
            health_path=app.get("health", "/healthz"), api=dict(data.get("api", {})),
            locators={k: dict(v) for k, v in data.get("locators", {}).items()},
            tools={k: list(v) for k, v in data.get("tools", {}).items()}, env=dict(app.get("env", {})),
            app=app, recall=_recall(data), limits=_limits(data),
            index_kinds={k: {sk: str(sv) for sk, sv in v.items()} for k, v in data.get("index_kinds", {}).items()},
            fault_scenarios={str(k): [str(s) for s in v] for k, v in data.get("faults", {}).items()},
            known_defects=_known_defects(data, path),
            forgetting=_forgetting(data), write_bodies=_write_bodies(data),
            changes=parse_changes(dict(data.get("changes", {})), path.name, history_sizes=_history_sizes(data),
                                  index_kinds=[str(k) for k in data.get("index_kinds", {})]),
            history_sizes=_history_sizes(data), operator_settings=_operator_settings(data),
            web_page=bool(data.get("web_page", True)),
            email_domain=str(data.get("accounts", {}).get("email_domain", "")),
            warm_start=warm_start_for(app.get("preload"), dict(app.get("env", {})), str(path)),
        ))
    except KeyError as e:
        raise TargetError(f"target file {path} lacks the key {e}; see targets/*.toml for the shape") from None
    except (ChangeError, WarmStartError) as e:
        raise TargetError(str(e)) from None
    except (TypeError, ValueError, AttributeError) as e:
        raise TargetError(f"target file {path} has a value of the wrong shape ({e});"
                          " see targets/*.toml") from None

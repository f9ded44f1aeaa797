# Every target sets up what it needs first, so each works on a fresh machine.
SHELL := /bin/bash
# Python's byte-code caches, and pytest's cache of rewritten test modules, even where the machine turns them off (this
# one sets PYTHONDONTWRITEBYTECODE=1): without them every pytest process compiled the suite again (3.5 s to collect
# the features, 1.2 s with them), and each of the kill matrix's 23 pytest processes and every app start paid it.
unexport PYTHONDONTWRITEBYTECODE
PY := .venv/bin/python
BIN := .venv/bin
PYTEST := $(PY) -m pytest
UV_VERSION := 0.13.9
UV := .venv/bin/uv
STAMP := .venv/.installed-$(shell cat requirements.lock pyproject.toml | sha1sum | cut -c1-12)
ALLURE_VERSION := 3.18.0
ALLURE := .tools/allure/node_modules/.bin/allure
# The loopback browser server for --browser-ws (tools/browser_server.mjs). npm has no playwright-core 1.65.2, the
# pinned Python playwright's version: 1.65.1 speaks the same protocol (client and server must share major.minor).
PLAYWRIGHT_CORE_VERSION := 1.65.1
BROWSER_SERVER := .tools/browser-server/node_modules/playwright-core/package.json
# gitlab-ci-local for make ci-check; 4.75.1 does not start on Node 20 (it calls Set.prototype.union, Node 22).
GCL_VERSION := 4.65.0
GCL := .tools/gitlab-ci-local/node_modules/.bin/gitlab-ci-local
DEBIAN_CHROMIUM := /usr/lib/chromium/chromium
DEBIAN_HEADLESS_SHELL := /usr/lib/chromium/chromium-headless-shell
BROWSER_STAMP := .tools/browser-with-headless-shell.ok
N ?= 2
# pytest processes per Open WebUI configuration in make test-open-webui (the two configurations run at once).
OWUI_N ?= 1
OWUI_SPLIT ?=
OWUI_SEEDS ?= 20261130 7
# pytest-playwright's --tracing for the real apps' runs (test-open-webui, test-letta, test-khoj); empty: pytest.ini's
# retain-on-failure. .ci/run passes off (a trace costs a fifth of an Open WebUI run's CPU; screenshots stay).
TRACING ?=
RUNS ?= 10
SEEDS ?= 20
SHARDS ?= 3
RUN ?= acceptance
# A target by name: targets/$(TARGET).toml (kill-matrix TARGET=open-webui).
TARGET ?=
# Open WebUI, the second maintained target, in its own virtual environment (about 3 GB with a CPU-only torch).
OWUI := .tools/open-webui
OWUI_VERSION := 0.12.4
OWUI_STAMP := $(OWUI)/.installed-$(OWUI_VERSION)-$(shell sha1sum targets/open-webui.constraints.txt | cut -c1-12)
# The older release the upgrade replay starts first ([changes] in targets/open-webui.toml), in a venv of its own.
OWUI_OLD_VERSION := 0.11.4
OWUI_OLD := .tools/open-webui-$(OWUI_OLD_VERSION)
OWUI_OLD_PINS := targets/open-webui-$(OWUI_OLD_VERSION).constraints.txt
OWUI_OLD_STAMP := $(OWUI_OLD)/.installed-$(shell sha1sum $(OWUI_OLD_PINS) | cut -c1-12)
# torch before Open WebUI, so that no CUDA build comes in: this machine's pip finds the CPU wheel on disk; elsewhere
# pass OWUI_TORCH_INDEX=https://download.pytorch.org/whl/cpu
OWUI_TORCH ?= torch==2.13.0
OWUI_TORCH_INDEX ?=
# Letta, the third maintained target (an agent server with a REST API and no web page), in its own virtual
# environment (about 1.2 GB): exactly the measured set of packages, without pip's resolver (--no-deps).
LETTA := .tools/letta
LETTA_VERSION := 0.16.8
KHOJ := .tools/khoj
KHOJ_VERSION := 2.0.0b28
LETTA_STAMP := $(LETTA)/.installed-$(LETTA_VERSION)-$(shell sha1sum targets/letta.pins.txt | cut -c1-12)
KHOJ_STAMP := $(KHOJ)/.installed-$(KHOJ_VERSION)-$(shell sha1sum targets/khoj.pins.txt | cut -c1-12)

.PHONY: conformance khoj test-khoj mutation mutation-tools explore browser-server ci-check ci-merge ci-sim durations engine engine-stop long-sessions replay-scale setup test report kill-matrix flake-check bench lint clean open-webui test-open-webui letta test-letta steps

setup: $(STAMP) $(BROWSER_STAMP)

# uv installs the pinned packages (pip's resolver and compile step took 1-3 minutes a virtual environment here; uv
# takes seconds); pip only installs uv itself, and torch where a CPU build lies on this machine's disk. Then the
# project itself, editable and without dependencies (they are the pinned ones): its packages and its console scripts
# (pyproject.toml [project.scripts], the tools make runs below).
$(STAMP): requirements.lock pyproject.toml
	@test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q uv==$(UV_VERSION)
	$(UV) pip install -q --python $(PY) -r requirements.lock
	$(UV) pip install -q --python $(PY) --no-deps -e .
	@rm -f .venv/.installed-* && touch $@

# A browser: Playwright's own of the pinned version's revision (under $$PLAYWRIGHT_BROWSERS_PATH, as in Playwright's
# Docker images, else ~/.cache/ms-playwright); else Debian's chromium and its headless shell, which the suite runs
# headless as Playwright does its own (on Debian, as root, with apt; Ubuntu's chromium package is a snap stub that
# does not run in containers); else Playwright's download, into the same place.
$(BROWSER_STAMP): | $(STAMP)
	@mkdir -p .tools
	@if { [ -x "$(DEBIAN_CHROMIUM)" ] && [ -x "$(DEBIAN_HEADLESS_SHELL)" ]; } \
	  || $(PY) -c 'import sys; from harness.browser.chromium import playwright_chromium as c; sys.exit(not c())'; \
	then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && grep -q '^ID=debian' /etc/os-release; then \
	  (apt-get -o DPkg::Lock::Timeout=900 update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get -o DPkg::Lock::Timeout=900 install -y -qq chromium chromium-headless-shell) \
	    >/dev/null; \
	else $(PY) -m playwright install $$([ "$$(id -u)" = 0 ] && echo --with-deps) chromium; fi
	@touch $@

$(ALLURE):
	@mkdir -p .tools/allure
	npm install --prefix .tools/allure --no-audit --no-fund --silent allure@$(ALLURE_VERSION)

$(BROWSER_SERVER):
	@mkdir -p .tools/browser-server
	npm install --prefix .tools/browser-server --no-audit --no-fund --silent playwright-core@$(PLAYWRIGHT_CORE_VERSION)

browser-server: $(BROWSER_SERVER)

$(GCL):
	@mkdir -p .tools/gitlab-ci-local
	npm install --prefix .tools/gitlab-ci-local --no-audit --no-fund --silent gitlab-ci-local@$(GCL_VERSION)

# The project's own tests: the reference app's, the support package's, and the acceptance suite on the clean app;
# then its smoke and in-session scenarios with its model client on (memchat-model: about 35 s here), the only run of
# that client's code, which is also memchat-model's column of the conformance table (its JUnit under
# reports/memchat-model/).
test: setup $(BROWSER_SERVER)
	$(PYTEST) memchat/tests -q -p no:cacheprovider -n $(N)
	$(PYTEST) tests -q -p no:cacheprovider -n $(N)
	$(PYTEST) features -q -n $(N) --alluredir=reports/allure-results --clean-alluredir --junitxml=reports/junit.xml
	$(PYTEST) features -q -p no:cacheprovider -n $(N) -m "smoke or in_session" --target memchat-model \
	  --junitxml=reports/memchat-model/junit.xml --alluredir=reports/memchat-model/allure-results --clean-alluredir

# The main job: the acceptance suite against the reference app, then its Allure report (built even when red), of
# this run only; SELECT="features/x.feature -k word" runs what those pytest arguments select instead.
report: setup $(ALLURE)
	@status=0; $(PYTEST) $(or $(SELECT),features) --alluredir=reports/allure-results --clean-alluredir || status=$$?; \
	  $(ALLURE) generate reports/allure-results -o reports/allure >/dev/null && \
	  echo "report: reports/allure/index.html (serve it: $(ALLURE) open reports/allure)"; exit $$status

# ruff, then mypy over harness/, actors/, steps/, pages/ and tools/ (pyproject.toml [tool.mypy]); its summary line
# says how many files it checked.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The step catalogue, docs/steps.md, written from the step modules conftest.py lists (tools/step_catalogue.py). It
# reads their source and imports them, no app, browser or database: the packages are all it needs of set-up.
# .ci/run fails when the committed file differs from what this writes.
steps: $(STAMP)
	$(BIN)/memtest-steps

clean:
	rm -rf reports test-results .pytest_cache

# Each scenario's duration, for pytest-split's shards (--splits N --group I): the whole suite once, serially, into
# ci/durations.json (committed; refresh it when scenarios are added or change much).
durations: setup
	$(PYTEST) features -q -p no:cacheprovider --store-durations --alluredir=reports/allure-results --clean-alluredir

# SHARDS shards of the suite here, each a separate pytest process as on separate CI machines (JOBS at once, default
# one after another), then one Allure report merged from their results, with history, and the union checked: every
# scenario in exactly one shard and once in the report. Prints `ci-sim: N scenarios in S shards, union ok`.
ci-sim: setup $(ALLURE)
	$(BIN)/memtest-shards run --shards $(SHARDS) $(if $(JOBS),--jobs $(JOBS))

# The CI templates' merge job (ci/gitlab-ci.yml, ci/github-actions.yml): one Allure report from the shards of RUN
# (reports/RUN/shards/*/), its history in reports/RUN/allure-history/ (carried between pipelines by the CI's cache),
# and the union of the shards' JUnit files checked against the suite that SELECT (pytest options) selects.
ci-merge: $(STAMP) $(ALLURE)
	@status=0; $(BIN)/memtest-shards merge --results reports/$(RUN)/shards/*/allure-results \
	  --report reports/$(RUN)/allure --history reports/$(RUN)/allure-history/history.jsonl || status=1; \
	$(BIN)/memtest-shards check --junit reports/$(RUN)/shards/*/junit.xml --report reports/$(RUN)/allure -- $(SELECT) \
	  || status=1; exit $$status

# The CI templates proven by running them (ci/check.sh): schemas and actionlint, the GitLab pipeline under
# gitlab-ci-local with its shell executor, and with the engine's images and services where make engine is up.
ci-check: setup $(ALLURE) $(GCL)
	@ci/check.sh

# Kill matrix: the whole suite on the clean app, and each documented fault against the scenarios tagged to catch it.
# FAULTS=a,b runs a subset; JOBS pytest processes at once.
kill-matrix: setup $(if $(filter open-webui%,$(TARGET)),$(OWUI_STAMP) $(OWUI_OLD_STAMP)) $(if $(filter letta,$(TARGET)),$(LETTA_STAMP)) \
  $(if $(filter khoj,$(TARGET)),$(KHOJ_STAMP))
	$(BIN)/memtest-kill-matrix $(if $(TARGET),--target $(TARGET)) $(if $(FAULTS),--faults $(FAULTS)) \
	  $(if $(JOBS),--jobs $(JOBS)) $(if $(CLEAN_JUNIT),--clean-from-junit $(CLEAN_JUNIT))

# The clean suite RUNS times in random order (pytest-randomly) with -n $(N); lists every scenario that failed once.
flake-check: setup
	$(BIN)/memtest-flake-check --runs $(RUNS) -n $(N)

# Exploration (nightly, not the merge-request gate): the generated sessions of a new seed, from the date (UTC) unless
# SEED is given; the seed is printed first, so that a find reproduces (`make explore SEED=...`). A seed that finds a
# difference is added to [[regression]] in harness/sessions/seeds.toml, with the date, the target and what it found
# (python -m harness.sessions.seeds found): commit the file to replay it first on that target.
explore: setup
	@seed=$${SEED:-$$($(BIN)/python -c 'from harness.sessions.seeds import exploration_seed; print(exploration_seed())')}; \
	  echo "explore: seed $$seed (make explore SEED=$$seed reproduces it)"; \
	  $(PYTEST) features/generated_sessions.feature -m "not long_form and not more_seeds" --seed $$seed \
	    -p no:cacheprovider $(if $(TARGET),--target $(TARGET)) --alluredir=reports/allure-results-explore --clean-alluredir \
	  || { status=$$?; $(BIN)/python -m harness.sessions.seeds found --seed $$seed; exit $$status; }

# The long form of the generated sessions (nightly): SEEDS seeds from FIRST_SEED, two at a time.
long-sessions: setup
	$(BIN)/memtest-long-sessions --runs $(SEEDS) $(if $(FIRST_SEED),--first-seed $(FIRST_SEED)) \
	  $(if $(TARGET),--target $(TARGET)) $(if $(FAULTS),--faults $(FAULTS)) $(if $(JOBS),--jobs $(JOBS))

# The replays at scale (10k, 100k and 1M generated memories, every memory and probe checked): the @scale examples
# of features/replay_through_changes.feature, left out of the default run, at the sizes the target replays through
# each change it declares (the reference app: its migration at 10k, 100k and 1M, its other changes at 100k).
replay-scale: setup
	$(PYTEST) features -m scale --scale -p no:cacheprovider $(if $(TARGET),--target $(TARGET)) \
	  --alluredir=reports/allure-results-scale --clean-alluredir

# Wall times of the suite (serial, -n 2), one scenario against a bare Playwright script, storage_state vs form login,
# and the migration replay at 1k, 10k, 100k and 1M memories (reports/bench.json keys "suite" and "migration").
bench: setup
	$(BIN)/memtest-bench

# A Docker-API engine (podman) and locally built PostgreSQL+pgvector 0.8 and Redis images, for --db testcontainers
# where no Docker runs: `eval "$$(make -s engine)"` exports what testcontainers and the suite need.
engine: setup
	@ci/engine.sh start

engine-stop:
	@ci/engine.sh stop

# Open WebUI in its own virtual environment, at the pinned version with pinned dependencies.
$(OWUI_STAMP): targets/open-webui.constraints.txt | $(STAMP)
	@rm -rf $(OWUI) && python3 -m venv $(OWUI)
	$(OWUI)/bin/pip install -q "$(OWUI_TORCH)" $(if $(OWUI_TORCH_INDEX),--index-url $(OWUI_TORCH_INDEX))
	$(UV) pip install -q --python $(OWUI)/bin/python -c targets/open-webui.constraints.txt \
	  open-webui==$(OWUI_VERSION) pgvector psycopg2-binary
	@touch $@

$(OWUI_OLD_STAMP): $(OWUI_OLD_PINS) | $(STAMP)
	@rm -rf $(OWUI_OLD) && python3 -m venv $(OWUI_OLD)
	$(OWUI_OLD)/bin/pip install -q "$(OWUI_TORCH)" $(if $(OWUI_TORCH_INDEX),--index-url $(OWUI_TORCH_INDEX))
	$(UV) pip install -q --python $(OWUI_OLD)/bin/python -c $(OWUI_OLD_PINS) \
	  open-webui==$(OWUI_OLD_VERSION) pgvector psycopg2-binary
	@touch $@

open-webui: $(OWUI_STAMP) $(OWUI_OLD_STAMP)

# The same features against Open WebUI, started by the suite: on its default stores (SQLite + Chroma), and on
# PostgreSQL + pgvector from the suite's database providers, the two runs at once (each waits mostly on its own app:
# one after the other they took 18 minutes here), the first listed seed's generated session only (each takes minutes
# there; the reference app acts the others out). Their output follows, one run after the other, from
# reports/open-webui/pytest*.log; JUnit files in reports/open-webui/. OWUI_SPLIT=1 runs each scenario against one of
# the two configurations instead of both (--share: two shares balanced by ci/durations.json, the first on SQLite +
# Chroma, the second on PostgreSQL + pgvector), except the generated session, which each acts out in browsers with a
# seed of its own (OWUI_SEEDS, in order): half the CPU, each store behind a share of every feature's scenarios, and
# two seeds acted out (.ci/run's choice, docs/ci.md).
test-open-webui: setup $(OWUI_STAMP) $(OWUI_OLD_STAMP)
	@mkdir -p reports/open-webui; pids=""; half=0; \
	for t in open-webui open-webui-pgvector; do half=$$((half + 1)); \
	  $(PYTEST) features --target $$t -m "not more_seeds" $(if $(filter-out 1,$(OWUI_N)),-n $(OWUI_N)) \
	    $(if $(OWUI_SPLIT),--share $$half/2 --seed $$(echo $(OWUI_SEEDS) | cut -d' ' -f$$half)) \
	    -p no:cacheprovider $(if $(TRACING),--tracing $(TRACING)) \
	    --junitxml=reports/open-webui/junit$${t#open-webui}.xml \
	    --alluredir=reports/open-webui/allure-results$${t#open-webui} --clean-alluredir \
	    --output=reports/open-webui/playwright$${t#open-webui} > reports/open-webui/pytest$${t#open-webui}.log 2>&1 & \
	  pids="$$pids $$!"; \
	done; status=0; for p in $$pids; do wait $$p || status=1; done; \
	for t in open-webui open-webui-pgvector; do echo "== pytest features --target $$t"; \
	  cat reports/open-webui/pytest$${t#open-webui}.log; done; exit $$status

# Mutation testing of the reference app (docs/mutation.md): SAMPLE mutants drawn with SEED from cosmic-ray's (Python,
# in .tools/cosmic-ray with the suite's operators) and StrykerJS's (the page's scripts, in .tools/stryker), each run
# against the scenarios that reach it. Writes reports/mutation.json and .md; fails under MIN_SCORE % killed.
# FROM=mutation-killed.toml draws only from the mutants the last scored draw killed (CI's sample); TIMEOUT: seconds
# per mutant's run (420 by default).
SAMPLE ?= 100
SEED ?= 20261204
MIN_SCORE ?= 90
COSMIC_RAY := .tools/cosmic-ray
COSMIC_RAY_STAMP := $(COSMIC_RAY)/.installed-$(shell cat tools/mutation/cosmic-ray.pins.txt tools/mutation/cosmic_ray_plugin/* 2>/dev/null | sha1sum | cut -c1-12)
STRYKER_VERSION := 9.6.1
STRYKER := .tools/stryker/node_modules/@stryker-mutator/core/package.json

$(COSMIC_RAY_STAMP): tools/mutation/cosmic-ray.pins.txt | $(STAMP)
	@rm -rf $(COSMIC_RAY) && python3 -m venv $(COSMIC_RAY)
	$(UV) pip install -q --no-deps --python $(COSMIC_RAY)/bin/python -r tools/mutation/cosmic-ray.pins.txt
	$(UV) pip install -q --no-deps --python $(COSMIC_RAY)/bin/python ./tools/mutation/cosmic_ray_plugin
	@touch $@

$(STRYKER):
	@mkdir -p .tools/stryker
	npm install --prefix .tools/stryker --no-audit --no-fund --silent @stryker-mutator/core@$(STRYKER_VERSION)

# The mutation tools alone (CI installs them beside make test).
mutation-tools: $(COSMIC_RAY_STAMP) $(STRYKER)

mutation: setup mutation-tools
	$(BIN)/memtest-mutation --sample $(SAMPLE) --seed $(SEED) --min-score $(MIN_SCORE) $(if $(FROM),--from $(FROM)) \
	  $(if $(TIMEOUT),--timeout $(TIMEOUT))

# One table of every scenario against every target in targets/ (docs/conformance.md): each target's latest full run
# (a target without one is run first), with its kill matrix; reports/conformance/{index.html,conformance.md,.json}.
conformance: setup
	$(BIN)/memtest-conformance $(if $(TARGETS),--targets $(TARGETS))

# Letta in its own virtual environment, at the pinned version with every dependency pinned (targets/letta.pins.txt).
$(LETTA_STAMP): targets/letta.pins.txt | $(STAMP)
	@rm -rf $(LETTA) && python3 -m venv $(LETTA)
	$(UV) pip install -q --no-deps --python $(LETTA)/bin/python -r targets/letta.pins.txt
	@$(LETTA)/bin/python -c 'import importlib.metadata as m, sys; v = m.version("letta"); \
	  sys.exit(0 if v == "$(LETTA_VERSION)" else f"letta {v} installed, not $(LETTA_VERSION)")'
	@touch $@

letta: $(LETTA_STAMP)

# Khoj in its own virtual environment (targets/khoj.pins.txt: every package pinned as on its release day, torch as
# its CPU build from the machine's pip find-links, triton left out). Every start writes into the environment (Django's
# collectstatic): it stays writable.
$(KHOJ_STAMP): targets/khoj.pins.txt | $(STAMP)
	@rm -rf $(KHOJ) && python3 -m venv $(KHOJ)
	$(UV) pip install -q --no-deps --python $(KHOJ)/bin/python $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS)) \
	  -r targets/khoj.pins.txt
	@$(KHOJ)/bin/python -c 'import importlib.metadata as m, sys; v = m.version("khoj"); \
	  sys.exit(0 if v == "$(KHOJ_VERSION)" else f"khoj {v} installed, not $(KHOJ_VERSION)")'
	@touch $@

khoj: $(KHOJ_STAMP)

# The same features against Letta, started by the suite on PostgreSQL + pgvector from its database providers, with
# the suite's model server as its chat and embedding model: every listed seed's generated session, the others after
# the first through its API (about 2.5 minutes more here). JUnit in reports/letta/.
test-letta: setup $(LETTA_STAMP)
	@mkdir -p reports/letta
	$(PYTEST) features --target letta -n $(N) -p no:cacheprovider \
	  $(if $(TRACING),--tracing $(TRACING)) \
	  --junitxml=reports/letta/junit.xml \
	  --alluredir=reports/letta/allure-results --clean-alluredir --output=reports/letta/playwright

# The same features against Khoj, started by the suite on PostgreSQL + pgvector from its database providers (each
# app's database a copy of one migrated template), with the suite's model server as its chat model, embedder and
# memory manager: every listed seed's generated session, the first in browsers, the others through its API (about 3.5
# minutes more here). JUnit in reports/khoj/.
test-khoj: setup $(KHOJ_STAMP)
	@mkdir -p reports/khoj
	$(PYTEST) features --target khoj -n $(N) -p no:cacheprovider \
	  $(if $(TRACING),--tracing $(TRACING)) \
	  --junitxml=reports/khoj/junit.xml \
	  --alluredir=reports/khoj/allure-results --clean-alluredir --output=reports/khoj/playwright

# Every target sets up what it needs first, so each works on a fresh machine.
SHELL := /bin/bash
PY := .venv/bin/python
PYTEST := $(PY) -m pytest
STAMP := .venv/.installed-$(shell sha1sum requirements.lock | cut -c1-12)
ALLURE_VERSION := 3.18.0
ALLURE := .tools/allure/node_modules/.bin/allure
DEBIAN_CHROMIUM := /usr/lib/chromium/chromium
N ?= 2
RUNS ?= 10

.PHONY: setup test report kill-matrix flake-check bench lint clean

setup: $(STAMP) .tools/browser.ok

$(STAMP): requirements.lock
	@test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.lock
	@rm -f .venv/.installed-* && touch $@

# A browser: Playwright's own if present; else Debian's chromium (as root, with apt); else Playwright's download.
.tools/browser.ok: | $(STAMP)
	@mkdir -p .tools
	@if [ -x "$(DEBIAN_CHROMIUM)" ] || ls $$HOME/.cache/ms-playwright/chromium-* >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
	else $(PY) -m playwright install chromium; fi
	@touch $@

$(ALLURE):
	@mkdir -p .tools/allure
	npm install --prefix .tools/allure --no-audit --no-fund --silent allure@$(ALLURE_VERSION)

# The project's own tests: the reference app's, the support package's, and the acceptance suite on the clean app.
test: setup
	$(PYTEST) memchat/tests -q -p no:cacheprovider
	$(PYTEST) tests -q -p no:cacheprovider
	$(PYTEST) features -q -n $(N) --alluredir=reports/allure-results --clean-alluredir

# The main job: the acceptance suite against the reference app, then its Allure report (built even when red).
report: setup $(ALLURE)
	@status=0; $(PYTEST) features --alluredir=reports/allure-results --clean-alluredir || status=$$?; \
	  $(ALLURE) generate reports/allure-results -o reports/allure >/dev/null && \
	  echo "report: reports/allure/index.html (serve it: $(ALLURE) open reports/allure)"; exit $$status

lint: setup
	.venv/bin/ruff check .

clean:
	rm -rf reports test-results .pytest_cache

# Kill matrix: the whole suite on the clean app, and each documented fault against the scenarios tagged to catch it.
# FAULTS=a,b runs a subset; JOBS pytest processes at once.
kill-matrix: setup
	$(PY) tools/kill_matrix.py $(if $(FAULTS),--faults $(FAULTS)) $(if $(JOBS),--jobs $(JOBS))

# The clean suite RUNS times in random order (pytest-randomly) with -n $(N); lists every scenario that failed once.
flake-check: setup
	$(PY) tools/flake_check.py --runs $(RUNS) -n $(N)

# Wall times of the suite (serial, -n 2), one scenario against a bare Playwright script, storage_state vs form login.
bench: setup
	$(PY) tools/bench_suite.py

#!/usr/bin/env bash
# make ci-check: the CI templates proven by running them here, as pasted.
#   1. both templates against their published schemas, offline (check-jsonschema's vendored GitLab CI and GitHub
#      workflow schemas), and actionlint on the workflow;
#   2. the GitLab template's merge-request pipeline under gitlab-ci-local with its shell executor: every job's script
#      on this machine (services dropped: the suite then starts its embedded databases), on a small slice of the suite;
#   3. where the Docker-API engine is up (make engine: DOCKER_HOST) and not ENGINE=0, the smoke jobs as declared,
#      image and services, on that engine, with images built here named by the template's variables (ci/images.sh);
#   4. the scheduled pipeline: which jobs it would run; with NIGHTLY=1 also the nightly job itself (shell executor,
#      one seed of the long form: minutes).
# Ends with a note of which job ran with which executor, and its result. Logs in reports/ci-check/.
set -euo pipefail
cd "$(dirname "$0")/.."
GCL=.tools/gitlab-ci-local/node_modules/.bin/gitlab-ci-local
OUT=reports/ci-check
mkdir -p "$OUT"
start=$(date +%s)
notes=()
say() { echo "ci-check: $*"; }
fail() { echo "ci-check: $*" >&2; exit 1; }

# -- 1. schemas and actionlint ---------------------------------------------------------------------------------------
.venv/bin/check-jsonschema --builtin-schema vendor.gitlab-ci ci/gitlab-ci.yml
.venv/bin/check-jsonschema --builtin-schema vendor.github-workflows ci/github-actions.yml
.venv/bin/actionlint -no-color ci/github-actions.yml && echo "actionlint: ci/github-actions.yml ok"
notes+=("schemas: ci/gitlab-ci.yml (GitLab CI), ci/github-actions.yml (GitHub workflow, actionlint): valid")

# -- gitlab-ci-local -------------------------------------------------------------------------------------------------
# gitlab-ci-local copies the tracked files with rsync, also for shell jobs.
if ! command -v rsync >/dev/null; then
  [[ $(id -u) == 0 ]] || fail "gitlab-ci-local needs rsync: apt-get install rsync"
  # (another install may hold Debian's package lock, as make engine's beside it in CI: wait for it, do not fail)
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq rsync >/dev/null 2>&1 \
    || { apt-get -o DPkg::Lock::Timeout=900 update -qq \
         && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq rsync >/dev/null; }
fi
# A merge-request pipeline on the reference app: the sharded job too (MEMTEST_TARGET), on two smoke scenarios, so
# that one of the three shards is empty (the template's exit-5 case) and the whole run stays short.
SLICE='-m "smoke and in_session"'
common=(--state-dir "$OUT/state" --no-color --concurrency 1
        --ignore-predefined-vars CI_PIPELINE_SOURCE --variable CI_PIPELINE_SOURCE=merge_request_event
        --variable MEMTEST_TARGET=memchat --variable "MEMTEST_SMOKE_ARGS=$SLICE" --variable "MEMTEST_PYTEST_ARGS=$SLICE")

# Rows of gitlab-ci-local's closing summary (" PASS  job"), as notes with the executor that ran them.
summarise() {  # log, executor
  local row
  while read -r row; do notes+=("gitlab-ci-local, $2: $row"); done \
    < <(sed -n 's/^ *\(PASS\|FAIL\|WARN\)  *\(.*[^ ]\) *$/\1 \2/p' "$1")
}

run_pipeline() {  # executor label, log, gitlab-ci-local options...
  local label=$1 log=$2
  shift 2
  rm -rf reports/smoke/shards reports/acceptance/shards  # the shards of earlier runs would count in the union
  say "gitlab-ci-local, $label (log: $log)"
  local status=0
  nice -n 19 "$GCL" "${common[@]}" "$@" >"$log" 2>&1 || status=$?
  summarise "$log" "$label"
  grep -E "^ *(PASS|FAIL|WARN) |pipeline finished" "$log" || true
  ((status == 0)) || { tail -30 "$log"; fail "the GitLab pipeline failed under gitlab-ci-local ($label); see $log"; }
}

# -- 2. shell executor -----------------------------------------------------------------------------------------------
# Services cannot run in a shell job, and gitlab-ci-local starts them for any job that declares them: the shell run
# uses the template with `services:` dropped, and the suite's embedded databases (DSN variables emptied).
.venv/bin/python - ci/gitlab-ci.yml "$OUT/gitlab-ci.shell.yml" <<'EOF'
import sys
from ruamel.yaml import YAML
yaml = YAML()
pipeline = yaml.load(open(sys.argv[1], encoding="utf-8"))
for job in pipeline.values():
    if isinstance(job, dict):
        job.pop("services", None)
yaml.dump(pipeline, open(sys.argv[2], "w", encoding="utf-8"))
EOF
run_pipeline "shell executor" "$OUT/gitlab-shell.log" --file "$OUT/gitlab-ci.shell.yml" --force-shell-executor \
  --variable MEMTEST_PG_DSN= --variable MEMTEST_REDIS_URL=

# -- 3. image and services on the engine -----------------------------------------------------------------------------
# The smoke jobs as declared: memtest-smoke in the Playwright image's stand-in with PostgreSQL and Redis services,
# memtest-smoke-report in the Node image's. Each job makes its own .venv in its container (pip, npm), as in GitLab.
if [[ -n ${DOCKER_HOST:-} && ${ENGINE:-1} == 1 ]]; then
  images=$(ci/images.sh) || fail "the images for the engine run could not be built (see above)"
  eval "$images"
  # This machine's certificate bundle, so that pip and npm in the containers trust the registries as it does.
  ca=()
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    ca=(--ca-file /etc/ssl/certs/ca-certificates.crt --variable NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
  fi
  cp ci/gitlab-ci.yml "$OUT/gitlab-ci.yml"  # as it is, services and all
  run_pipeline "podman engine, image + services" "$OUT/gitlab-engine.log" --file "$OUT/gitlab-ci.yml" \
    --container-executable "$PWD/ci/podman-engine" --pull-policy if-not-present "${ca[@]}" \
    --helper-image "$GCL_HELPER_IMAGE" --wait-image "$GCL_WAIT_IMAGE" \
    --variable "MEMTEST_PLAYWRIGHT_IMAGE=$MEMTEST_PLAYWRIGHT_IMAGE" --variable "MEMTEST_NODE_IMAGE=$MEMTEST_NODE_IMAGE" \
    --variable "MEMTEST_PG_IMAGE=$MEMTEST_PG_IMAGE" --variable "MEMTEST_REDIS_IMAGE=$MEMTEST_REDIS_IMAGE" \
    --needs memtest-smoke-report
elif [[ -z ${DOCKER_HOST:-} ]]; then
  notes+=("gitlab-ci-local, podman engine: not run (no DOCKER_HOST: start the engine with make engine)")
else
  notes+=("gitlab-ci-local, podman engine: not run (ENGINE=0)")
fi

# -- 4. the scheduled pipeline ---------------------------------------------------------------------------------------
cp ci/gitlab-ci.yml "$OUT/gitlab-ci.yml"
scheduled=$("$GCL" --file "$OUT/gitlab-ci.yml" --state-dir "$OUT/state" --no-color --list \
  --ignore-predefined-vars CI_PIPELINE_SOURCE --variable CI_PIPELINE_SOURCE=schedule 2>/dev/null \
  | awk '$1 ~ /^memtest-/ {print $1}' | tr '\n' ' ')
[[ $scheduled == "memtest-nightly " ]] || fail "a scheduled pipeline should run memtest-nightly alone, not: $scheduled"
notes+=("gitlab-ci-local --list, scheduled pipeline: memtest-nightly alone")
if [[ ${NIGHTLY:-0} == 1 ]]; then  # the nightly job itself, one seed of the long form (minutes)
  log="$OUT/gitlab-nightly.log"
  say "gitlab-ci-local, shell executor, scheduled pipeline (log: $log)"
  status=0
  nice -n 19 "$GCL" --file "$OUT/gitlab-ci.shell.yml" --state-dir "$OUT/state" --no-color --force-shell-executor \
    --ignore-predefined-vars CI_PIPELINE_SOURCE --variable CI_PIPELINE_SOURCE=schedule \
    --variable MEMTEST_NIGHTLY_SEEDS=1 --variable MEMTEST_PG_DSN= --variable MEMTEST_REDIS_URL= \
    memtest-nightly >"$log" 2>&1 || status=$?
  summarise "$log" "shell executor, scheduled"
  ((status == 0)) || { tail -30 "$log"; fail "the nightly job failed under gitlab-ci-local; see $log"; }
fi

echo
say "done in $(( $(date +%s) - start )) s"
printf 'ci-check:   %s\n' "${notes[@]}"

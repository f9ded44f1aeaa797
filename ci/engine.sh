#!/usr/bin/env bash
# A Docker-API engine for testcontainers where no Docker runs: Debian's podman serving the Docker API on its own unix
# socket, and two images built here from Debian packages, with no registry:
#   localhost/memtest-pgvector:0.8.0-pg16  PostgreSQL 16.2 (the embedded provider's own tree, from the pgserver wheel)
#                                           with pgvector 0.8.0 built from Debian's source package against it
#   localhost/memtest-redis:<version>-bookworm  Redis from Debian 12's redis-server package
# Prints `export NAME=value` lines for a shell (eval "$(make -s engine)"). Idempotent: a second run reuses the images
# and the running service and takes seconds.
#
#   ci/engine.sh          set up (as root: installs packages), start the service, build missing images, print exports
#   ci/engine.sh stop     stop the service it started (by PID) and remove the containers left behind
#
# Everything lives under $MEMTEST_ENGINE_DIR (default ~/.cache/memtest-engine). Progress goes to stderr.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${MEMTEST_ENGINE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memtest-engine}
SOCK="$DIR/podman.sock"
PIDFILE="$DIR/service.pid"
PG_IMAGE=localhost/memtest-pgvector:0.8.0-pg16
PGVECTOR_VERSION=0.8.0
MIRROR=${MEMTEST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=(podman runc fuse-overlayfs slirp4netns uidmap debootstrap)

say() { echo "engine: $*" >&2; }
fail() { echo "engine: $*" >&2; exit 1; }

export CONTAINERS_CONF="$DIR/containers.conf" CONTAINERS_STORAGE_CONF="$DIR/storage.conf"
podman_() { podman --url "unix://$SOCK" "$@"; }

service_running() { [[ -f $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

stop() {
  if [[ -S $SOCK ]] && service_running; then
    # Containers of runs that were killed before they could remove their own (Ryuk cannot be pulled here).
    podman_ ps -aq --filter label=org.testcontainers.lang=python | xargs -r podman_ rm -f >/dev/null 2>&1 || true
  fi
  if service_running; then
    kill "$(cat "$PIDFILE")" && say "stopped the API service (pid $(cat "$PIDFILE"))"
  else
    say "no API service of ours is running"
  fi
  rm -f "$PIDFILE" "$SOCK"
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return
  [[ $(id -u) == 0 ]] || fail "needs ${missing[*]}: run as root, or install them (apt-get install ${missing[*]})"
  say "installing ${missing[*]}"
  # (another install may hold Debian's package lock, as ci-check's beside it in CI: wait for it, do not fail)
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q "${missing[@]}" >"$DIR/apt.log" 2>&1 \
    || fail "apt-get install ${missing[*]} failed; see $DIR/apt.log"
}

write_config() {
  # runc, not crun (crun fails on rlimits here); cgroupfs; events to a file; ulimits set for every container, since
  # containers created through the API take none and podman's defaults fail with runc here.
  cat >"$CONTAINERS_CONF" <<EOF
[engine]
runtime = "runc"
events_logger = "file"
cgroup_manager = "cgroupfs"
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
EOF
  cat >"$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "overlay"
graphroot = "$DIR/storage"
runroot = "$DIR/run"
EOF
}

start_service() {
  if service_running && [[ -S $SOCK ]]; then return; fi
  rm -f "$SOCK"
  nohup podman system service --time=0 "unix://$SOCK" >"$DIR/service.log" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 100); do
    if curl -fsS --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1; then
      # What docker-py asks first: a cold podman took over the suite's 2 s probe for it once, under load.
      curl -fsS --max-time 60 --unix-socket "$SOCK" http://d/version >/dev/null \
        || fail "the podman API service answers _ping but not /version; see $DIR/service.log"
      say "API service on $SOCK (pid $(cat "$PIDFILE"))"
      return
    fi
    service_running || break
    sleep 0.1  # polling the socket until the service answers, with a 10 s deadline
  done
  fail "the podman API service did not answer on $SOCK; see $DIR/service.log"
}

base_rootfs() {  # a minimal Debian 12, made once and copied for each image
  local base="$DIR/rootfs-bookworm"
  if [[ ! -f $base/.complete ]]; then
    say "debootstrap of Debian 12 (minbase) from $MIRROR"
    rm -rf "$base"
    debootstrap --variant=minbase bookworm "$base" "$MIRROR" >"$DIR/debootstrap.log" 2>&1 \
      || fail "debootstrap failed; see $DIR/debootstrap.log"
    touch "$base/.complete"
  fi
  rm -rf "$1" && cp -a "$base" "$1" && rm -f "$1/.complete"
}

import_rootfs() {  # rootfs, image name, then --change instructions
  local rootfs=$1 image=$2
  shift 2
  local changes=()
  for c in "$@"; do changes+=(--change "$c"); done
  tar -C "$rootfs" -c . | podman_ import "${changes[@]}" - "$image" >/dev/null
  rm -rf "$rootfs"
  say "built $image"
}

build_pgvector_image() {
  podman_ image exists "$PG_IMAGE" && return
  local site rootfs="$DIR/build/pg" src="$DIR/build/pgvector"
  site=$("$ROOT/.venv/bin/python" -W ignore -c 'import pathlib, pgserver; print(pathlib.Path(pgserver.__file__).parent.parent)' 2>/dev/null) \
    || fail "the pgserver wheel is not in .venv: run make setup first"
  mkdir -p "$DIR/build"
  base_rootfs "$rootfs"
  mkdir -p "$rootfs/opt/pg"
  cp -a "$site/pgserver" "$site/pgserver.libs" "$rootfs/opt/pg/"
  local pg_config="$rootfs/opt/pg/pgserver/pginstall/bin/pg_config"
  say "pgvector $PGVECTOR_VERSION from Debian's source package, built against $("$pg_config" --version)"
  rm -rf "$src" && mkdir -p "$src/lists/partial"
  echo "deb-src $MIRROR trixie main" >"$src/sources.list"
  local apt=(-q -o "Dir::Etc::SourceList=$src/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$src/lists")
  (cd "$src" && apt-get "${apt[@]}" update && apt-get "${apt[@]}" source --download-only "pgvector=$PGVECTOR_VERSION-1") \
    >"$DIR/pgvector-source.log" 2>&1 || fail "downloading pgvector's source failed; see $DIR/pgvector-source.log"
  tar -C "$src" -xzf "$src/pgvector_$PGVECTOR_VERSION.orig.tar.gz"
  make -C "$src/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$pg_config" OPTFLAGS="" install >"$DIR/pgvector-build.log" 2>&1 \
    || fail "building pgvector failed; see $DIR/pgvector-build.log"
  chroot "$rootfs" useradd --system --home-dir /var/lib/postgresql --create-home postgres
  local bin=/opt/pg/pgserver/pginstall/bin
  for tool in psql pg_isready postgres initdb pg_ctl; do ln -s "$bin/$tool" "$rootfs/usr/local/bin/$tool"; done
  install -m 0755 "$ROOT/ci/images/postgres-entrypoint.sh" "$rootfs/usr/local/bin/docker-entrypoint.sh"
  import_rootfs "$rootfs" "$PG_IMAGE" 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'EXPOSE 5432' \
    'ENV PGDATA=/var/lib/postgresql/data' 'STOPSIGNAL SIGINT'
}

redis_image_name() { echo "localhost/memtest-redis:$1-bookworm"; }

build_redis_image() {
  local known
  known=$(podman_ images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/memtest-redis:' | head -1 || true)
  if [[ -n $known ]]; then REDIS_IMAGE=$known; return; fi
  local rootfs="$DIR/build/redis"
  base_rootfs "$rootfs"
  say "redis-server from Debian 12's package"
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod +x "$rootfs/usr/sbin/policy-rc.d"
  chroot "$rootfs" sh -c 'apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server' \
    >"$DIR/redis-image.log" 2>&1 || fail "installing redis-server in the image failed; see $DIR/redis-image.log"
  rm -f "$rootfs/usr/sbin/policy-rc.d"
  local version
  version=$(chroot "$rootfs" redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')
  REDIS_IMAGE=$(redis_image_name "$version")
  import_rootfs "$rootfs" "$REDIS_IMAGE" 'EXPOSE 6379' \
    'ENTRYPOINT ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]'
}

case "${1:-start}" in
  stop) stop; exit 0 ;;
  start) ;;
  *) fail "unknown command ${1}; use: ci/engine.sh [start|stop]" ;;
esac

mkdir -p "$DIR"
install_packages
write_config
start_service
build_pgvector_image
build_redis_image
cat <<EOF
export DOCKER_HOST=unix://$SOCK
export TESTCONTAINERS_RYUK_DISABLED=true
export TESTCONTAINERS_CONNECTION_MODE=docker_host
export CONTAINERS_CONF=$CONTAINERS_CONF
export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF
export MEMTEST_PG_IMAGE=$PG_IMAGE
export MEMTEST_REDIS_IMAGE=$REDIS_IMAGE
EOF

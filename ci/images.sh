#!/usr/bin/env bash
# Images for make ci-check's run of the GitLab template on the engine (make engine), built here since no registry
# but PyPI, npm and Debian's is reachable. They stand in for the template's public images:
#   localhost/memtest-ci:bookworm   for Playwright's Python image, the Node image and gitlab-ci-local's helper image
#                                   (which copies artifacts with rsync): Debian 12 with Python 3.11
#                                   (venv), make, Chromium (no Playwright browsers: make setup takes Debian's), and this
#                                   machine's Node 20, with which Allure 3 runs here (Debian 12's is Node 18)
#   localhost/memtest-wait-for-it:bookworm   for gitlab-ci-local's wait image: waits for a service's port
# The database services are make engine's own images. Built from the engine's Debian 12 root file system; a second
# run finds them and takes a second. Prints `export NAME=value` lines; progress to stderr.
set -euo pipefail
DIR=${MEMTEST_ENGINE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memtest-engine}
CI_IMAGE=localhost/memtest-ci:bookworm
WAIT_IMAGE=localhost/memtest-wait-for-it:bookworm
say() { echo "images: $*" >&2; }
fail() { echo "images: $*" >&2; exit 1; }
[[ -n ${DOCKER_HOST:-} ]] || fail "no DOCKER_HOST: start the engine first (eval \"\$(make -s engine)\")"
podman_() { podman --url "$DOCKER_HOST" "$@"; }

build_ci_image() {
  podman_ image exists "$CI_IMAGE" && return
  [[ -f $DIR/rootfs-bookworm/.complete ]] || fail "no Debian root file system in $DIR: run make engine first"
  command -v node >/dev/null || fail "needs this machine's Node to copy into the image"
  local rootfs="$DIR/build/ci"
  rm -rf "$rootfs" && cp -a "$DIR/rootfs-bookworm" "$rootfs" && rm -f "$rootfs/.complete"
  say "Python, make and Chromium from Debian 12 into $CI_IMAGE"
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod +x "$rootfs/usr/sbin/policy-rc.d"
  chroot "$rootfs" sh -c 'apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends python3 python3-venv make chromium chromium-headless-shell ca-certificates git libatomic1 rsync' \
    >"$DIR/ci-image.log" 2>&1 || fail "installing packages in the image failed; see $DIR/ci-image.log"
  rm -f "$rootfs/usr/sbin/policy-rc.d"
  rm -rf "$rootfs/var/lib/apt/lists"/* "$rootfs/var/cache/apt/archives"/*.deb
  # Node: this machine's node and npm (libatomic1 above: Playwright's bundled Node driver needs it too).
  tar -C / -cf - usr/bin/node usr/lib/node_modules/npm | tar -C "$rootfs" -xf -
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
  tar -C "$rootfs" -c . | podman_ import --change 'CMD ["bash"]' - "$CI_IMAGE" >/dev/null
  rm -rf "$rootfs"
  say "built $CI_IMAGE"
}

build_wait_image() {
  podman_ image exists "$WAIT_IMAGE" && return
  local ctx="$DIR/build/wait"
  rm -rf "$ctx" && mkdir -p "$ctx"
  # wait-for-it's interface as gitlab-ci-local calls it: HOST:PORT -t SECONDS. Polls once per 0.2 s to a deadline.
  cat >"$ctx/wait-for-it" <<'EOF'
#!/bin/bash
target=$1 timeout=30
[[ ${2:-} == -t ]] && timeout=$3
host=${target%:*} port=${target##*:}
deadline=$((SECONDS + timeout))
until (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
  ((SECONDS < deadline)) || { echo "wait-for-it: $target did not answer in $timeout s" >&2; exit 1; }
  sleep 0.2
done
echo "wait-for-it: $target answers"
EOF
  chmod +x "$ctx/wait-for-it"
  printf 'FROM %s\nCOPY wait-for-it /usr/local/bin/wait-for-it\nENTRYPOINT ["/usr/local/bin/wait-for-it"]\n' \
    "$CI_IMAGE" >"$ctx/Containerfile"
  podman_ build -q -t "$WAIT_IMAGE" -f "$ctx/Containerfile" "$ctx" >/dev/null \
    || fail "building $WAIT_IMAGE failed"
  say "built $WAIT_IMAGE"
}

build_ci_image
build_wait_image
cat <<EOF
export MEMTEST_PLAYWRIGHT_IMAGE=$CI_IMAGE
export MEMTEST_NODE_IMAGE=$CI_IMAGE
export GCL_HELPER_IMAGE=$CI_IMAGE
export GCL_WAIT_IMAGE=$WAIT_IMAGE
EOF

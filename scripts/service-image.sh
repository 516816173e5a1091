#!/usr/bin/env bash
# scripts/service-image.sh [--import] <out.tar> [image-ref]
#
# Builds the service's own container image without Docker and writes it as a docker-archive tar
# (for `docker load`, `ctr images import`, `podman load`), the same image the Dockerfile at the
# repository root builds where a Docker daemon exists. The default ref is localhost/rln-cloud:dev.
# With --import the tar is then imported into the running test cluster's containerd
# (scripts/test-cluster.sh import), which is how the test cluster gets it: it pulls nothing.
#
# One layer (scripts/test-cluster/docker-archive.sh), like the devnode image:
#   /usr/bin/node           the node binary that runs this script, and the libraries `ldd` lists
#   /usr/local/bin/rln-cloud  the CLI, for `kubectl exec ... -- rln-cloud user create ...`
#   /app/package.json       where src/paths.ts finds the project root, so migrations and web
#                           assets resolve under /app
#   /app/node_modules       production dependencies only (`npm ci --omit=dev`)
#   /app/dist               the esbuild bundle `npm start` runs (scripts/build.mjs)
#   /app/src/db/migrations, /app/src/web/public, /app/src/vss/vss.proto   what the bundle reads at run time
#   /app/bin, /app/devnode  devnode, which RUNTIME=process runs when RLN_COMMAND is unset
#   /etc/passwd, /etc/group root and rlncloud (uid/gid 1000)
#   /tmp (1777), /data (1777: DATA_DIR; every file of the layer is root's, so it is world-writable
#                like /tmp for uid 1000; a volume is mounted over it in practice)
# and its config: Entrypoint [node, --enable-source-maps, --liftoff-only, --max-semi-space-size=4, /app/dist/rln-cloud.mjs] (the Dockerfile's), Cmd [serve],
# Env NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data, User 1000:1000, WorkingDir /app,
# ExposedPorts 8080 8081 8443, Volumes /data.
#
# The tar is cached outside the repository ($RLN_SERVICE_IMAGE_CACHE, default
# /var/cache/rln-cloud/service-image), keyed by a hash of everything that goes into it (sources,
# lock file, this script, the node binary; not the ref, which is rewritten on the copy): an
# unchanged tree, under any tag, is copied from the cache in a fraction of a second instead of rebuilt (~30-40 s on two cores: npm ci from npm's cache, the
# bundle, the smoke test).
# Progress goes to stderr.
set -euo pipefail

import=false
if [ "${1:-}" = --import ]; then import=true; shift; fi
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 [--import] <out.tar> [image-ref]" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "$1")
ref=${2:-localhost/rln-cloud:dev}
[[ "${ref##*/}" == *:* ]] || { echo "$0: image ref must be repo:tag, got $ref" >&2; exit 2; }
CACHE=${RLN_SERVICE_IMAGE_CACHE:-/var/cache/rln-cloud/service-image}

log() { printf '[service-image %s] %s\n' "$(date +%T)" "$*" >&2; }

# The project's Node (the `node` package npm ci installs, the one the service runs on), else the host's.
node_bin=$(readlink -f "$REPO/node_modules/.bin/node" 2>/dev/null || true)
[ -x "$node_bin" ] || node_bin=$(readlink -f "$(command -v node)")
WORK_DIRS=()
trap 'rm -rf "${WORK_DIRS[@]}"; rm -f "$CACHE"/*.tmp.$$ "$CACHE"/*.tmp.$$.tmp' EXIT

# What the image is made of, as the list of files the layer copies from the repository (tests
# excluded: they change often and are not in the image).
image_sources() {
  (cd "$REPO" && find src bin devnode -type f ! -name '*.test.ts' && echo package.json && echo package-lock.json &&
    echo scripts/build.mjs && echo scripts/service-image.sh && echo scripts/test-cluster/docker-archive.sh) | LC_ALL=C sort
}

# The ref is not an input: it is only the tag in the tar's manifest.json, rewritten on the copy
# (retag below), so a new tag of unchanged sources (a release, an upgrade drill) costs a copy.
inputs_hash() {
  {
    stat -c '%n %s %Y' "$node_bin"
    (cd "$REPO" && image_sources | xargs sha256sum)
  } | sha256sum | cut -d' ' -f1
}

build() { # build <out.tar>
  local target=$1 w root app
  w=$(mktemp -d)
  WORK_DIRS+=("$w")
  root=$w/rootfs
  app=$root/app
  mkdir -p "$root/usr/bin" "$root/usr/local/bin" "$root/etc" "$root/tmp" "$root/data" "$app"
  chmod 1777 "$root/tmp" "$root/data"

  # 1. Production dependencies into a staging copy of the manifests: `npm ci` reads the lock file,
  #    installs nothing else, and is quick from npm's cache. --ignore-scripts: no dependency needs
  #    an install script to run (esbuild's binary comes in its platform package, secp256k1's addon
#    prebuilt in its own), and none should
  #    run while building an image.
  log "npm ci --omit=dev (production dependencies)"
  cp "$REPO/package.json" "$REPO/package-lock.json" "$app/"
  (cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)

  # 2. The bundle, built by the project's own scripts/build.mjs from a copy of the sources, so it is
  #    exactly what `npm start` runs. esbuild is a production dependency, so it is in node_modules.
  mkdir -p "$w/build/scripts"
  cp -r "$REPO/src" "$w/build/src"
  cp "$REPO/scripts/build.mjs" "$w/build/scripts/"
  cp "$REPO/package.json" "$REPO/package-lock.json" "$w/build/"
  ln -s "$app/node_modules" "$w/build/node_modules"
  log "bundling with scripts/build.mjs"
  (cd "$w/build" && "$node_bin" scripts/build.mjs)
  cp -r "$w/build/dist" "$app/dist"

  # 3. What the bundle reads at run time, found from /app/package.json (src/paths.ts: projectPath),
  #    and devnode for RUNTIME=process (bin/devnode.mjs runs devnode/main.ts through tsx).
  mkdir -p "$app/src/db" "$app/src/web" "$app/src/vss"
  cp -r "$REPO/src/db/migrations" "$app/src/db/"
  cp -r "$REPO/src/web/public" "$app/src/web/"
  cp "$REPO/src/vss/vss.proto" "$app/src/vss/"
  cp -r "$REPO/bin" "$app/bin"
  (cd "$REPO" && find devnode -type f ! -name '*.test.ts' -exec cp --parents {} "$app/" \;)
  rm -f "$app/package-lock.json"

  # 4. node and its libraries, the user, the CLI.
  cp "$node_bin" "$root/usr/bin/node"
  local lib
  for lib in $(ldd "$node_bin" | grep -oE '/[^ ]+'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'rlncloud:x:1000:1000:rln-cloud:/tmp:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'rlncloud:x:1000:' >"$root/etc/group"
  # No shell in the image, so the CLI is a node script: a dynamic import works from CommonJS (no
  # package.json above /usr/local/bin says "module"); the bundle is found relative to the script,
  # so the smoke test below runs it from the staged tree too.
  printf '%s\n' '#!/usr/bin/node' "import(require('node:url').pathToFileURL(require('node:path').join(__dirname, '../../../app/dist/rln-cloud.mjs')).href);" >"$root/usr/local/bin/rln-cloud"
  chmod 755 "$root/usr/local/bin/rln-cloud"
  chmod -R u=rwX,go=rX "$root/usr" "$root/etc" "$app" "$root/lib"* 2>/dev/null || true

  # 5. Fail here, not in a pod: the staged tree must run `serve` with the image's settings (its own
  #    node, PGlite in a temporary DATA_DIR, free ports) until /healthz answers 200, then stop on
  #    SIGTERM. The CLI entry must answer --help.
  smoke_test "$root"

  local config
  config=$(REF=$ref node -e 'process.stdout.write(JSON.stringify([{
    ref: process.env.REF,
    config: {
      Entrypoint: ["/usr/bin/node", "--enable-source-maps", "--liftoff-only", "--max-semi-space-size=4", "/app/dist/rln-cloud.mjs"],
      Cmd: ["serve"],
      Env: ["NODE_ENV=production", "HOST=0.0.0.0", "DATA_DIR=/data"],
      User: "1000:1000",
      WorkingDir: "/app",
      ExposedPorts: { "8080/tcp": {}, "8081/tcp": {}, "8443/tcp": {} },
      Volumes: { "/data": {} },
      Labels: { "org.opencontainers.image.title": "rln-cloud", "org.opencontainers.image.description": "RLN Cloud control plane (rln-cloud serve)" },
    },
  }]))')
  "$REPO/scripts/test-cluster/docker-archive.sh" "$target" "$root" "$config"
}

free_port() { "$node_bin" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

smoke_test() { # smoke_test <rootfs>
  local root=$1 data pid i code=0 out
  "$root/usr/bin/node" "$root/usr/local/bin/rln-cloud" --help >/dev/null
  # VSS signature checks use libsecp256k1's prebuilt addon (src/vss/sigs-auth.ts), falling back to
  # OpenSSL at a seventh of the speed if it does not load: the image must carry a loadable one.
  (cd "$root/app" && "$root/usr/bin/node" -e "const m = require.resolve('secp256k1/package.json'); require('node:module').createRequire(m)('node-gyp-build')(require('node:path').dirname(m))") ||
    { log "ERROR: libsecp256k1's addon (the secp256k1 package) does not load from the staged tree"; exit 1; }
  data=$(mktemp -d)
  WORK_DIRS+=("$data" "$data.log")
  local api node_api mtls metrics
  api=$(free_port) node_api=$(free_port) mtls=$(free_port) metrics=$(free_port)
  log "smoke test: serve from the staged tree on 127.0.0.1:$api"
  (cd "$root/app" && exec env -i PATH=/usr/bin:/bin NODE_ENV=production HOST=127.0.0.1 DATA_DIR="$data" \
    API_PORT="$api" NODE_API_PORT="$node_api" MTLS_PORT="$mtls" METRICS_PORT="$metrics" LOG_LEVEL=warn \
    "$root/usr/bin/node" --enable-source-maps --liftoff-only --max-semi-space-size=4 "$root/app/dist/rln-cloud.mjs" serve) >"$data.log" 2>&1 &
  pid=$!
  for i in $(seq 240); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$api/healthz" || true)
    [ "$code" = 200 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; code="$code (did not stop on SIGTERM within 10 s)"; fi
  wait "$pid" 2>/dev/null || true
  out=$(tail -n 30 "$data.log")
  rm -rf "$data" "$data.log"
  [ "$code" = 200 ] || { printf '%s\n' "$out" >&2; log "ERROR: the staged service did not answer /healthz with 200 (got $code)"; exit 1; }
}

hash=$(inputs_hash)
cached=$CACHE/$hash.tar
if [ -s "$cached" ]; then
  log "unchanged inputs: $cached"
else
  mkdir -p "$CACHE"
  t0=$SECONDS
  log "building $ref"
  build "$cached.tmp.$$"
  mv "$cached.tmp.$$" "$cached"
  # only the newest few builds are kept: each is ~100 MB
  ls -t "$CACHE"/*.tar 2>/dev/null | tail -n +4 | xargs -r rm -f
  log "built in $((SECONDS - t0)) s ($(du -m "$cached" | cut -f1) MB)"
fi
# retag <tar>: make the image in <tar> carry $ref (its manifest.json's RepoTags), nothing else.
retag() {
  local tar=$1 w
  w=$(mktemp -d)
  WORK_DIRS+=("$w")
  tar -xOf "$tar" manifest.json | REF=$ref "$node_bin" -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const m = JSON.parse(s); m[0].RepoTags = [process.env.REF]; process.stdout.write(JSON.stringify(m));
    });' >"$w/manifest.json"
  tar --delete -f "$tar" manifest.json
  tar -C "$w" --mtime=@0 --owner=0 --group=0 --numeric-owner -rf "$tar" manifest.json
}
if [ "$cached" != "$out" ]; then
  mkdir -p "$(dirname "$out")"
  cp "$cached" "$out.tmp"
  tar -xOf "$out.tmp" manifest.json | grep -qF "\"$ref\"" || retag "$out.tmp"
  mv "$out.tmp" "$out"
fi
if $import; then
  "$REPO/scripts/test-cluster.sh" import "$out"
fi
log "wrote $out: $ref"

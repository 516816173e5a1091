#!/usr/bin/env bash
# scripts/devnode-image.sh <out.tar> <image>...
#
# Builds devnode's container image without Docker and writes it as ONE docker-archive tar (for
# `ctr images import`) that holds one image per <image> argument, e.g.
#   scripts/devnode-image.sh /tmp/devnode.tar localhost/devnode:devnode-0.1.0 localhost/devnode:devnode-0.2.0
# An argument without ":" is a version: `devnode-0.3.0` means localhost/devnode:devnode-0.3.0.
#
# All the images share one layer:
#   /devnode/devnode.mjs   devnode (devnode/main.ts) bundled by esbuild into one ES module: node:
#                          built-ins and the Biscuit library's JavaScript glue (src/platform/biscuit-wasm.ts)
#   /devnode/biscuit_bg.wasm  the Biscuit library's WebAssembly, which that loader reads from beside
#                          the bundle (it checks tokens when a node runs with --root-public-key)
#   /usr/bin/node          the host's node binary, and the shared libraries `ldd` lists for it
#   /usr/bin/{sh,cat,head,wc,mv,rm,mkdir,du,df}  the host's dash and coreutils (and their libraries), /bin a
#                          link to /usr/bin as on Debian: what the kubernetes runtime runs through
#                          exec to move files in and out of a node's storage (backups and
#                          restores, client backups, storage measurements: src/runtime/kubernetes/
#                          pod-storage-files.ts); RLN's Debian-based
#                          image has them. Copied from the host, like node: no download, no cache.
#   /etc/passwd, /etc/group  root and devnode (uid/gid 1000)
#   /tmp                   mode 1777
# and each image has its own config:
#   Entrypoint ["/usr/bin/node", "/devnode/devnode.mjs"]: the container takes exactly
#     rgb-lightning-node's command line (<storage_dir> --daemon-listening-port ... ), as RLN's does
#   Env DEVNODE_HOST=0.0.0.0 (devnode binds loopback by default; in a pod it must listen on the pod
#     address, as real RLN does) and DEVNODE_VERSION=<the image's tag> (devnode logs it; a tag
#     starting with fail- makes an image that fails at start, see devnode/README.md)
#   User 1000:1000, so `runAsNonRoot` works even without runAsUser.
# devnode writes only under its storage directory, so the image runs as a non-root user with a
# read-only root filesystem when the storage directory is a writable volume.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 <out.tar> <image>..." >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "$1")
shift

esbuild=$REPO/node_modules/.bin/esbuild
[ -x "$esbuild" ] || { echo "$0: $esbuild is missing: run \`npm ci\` first" >&2; exit 1; }
# The project's Node (the `node` package npm ci installs, the one the service runs on), else the host's.
node_bin=$(readlink -f "$REPO/node_modules/.bin/node" 2>/dev/null || true)
[ -x "$node_bin" ] || node_bin=$(readlink -f "$(command -v node)")

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
root=$w/rootfs
mkdir -p "$root/usr/bin" "$root/devnode" "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"

# --log-override:package.json: @biscuit-auth/biscuit-wasm's package.json says "sideEffects": "false"
# (a string, where esbuild wants a boolean), a warning about the package, not about devnode.
"$esbuild" "$REPO/devnode/main.ts" --bundle --platform=node --format=esm --log-level=warning \
  --log-override:package.json=silent --outfile="$root/devnode/devnode.mjs"
cp "$REPO/node_modules/@biscuit-auth/biscuit-wasm/module/biscuit_bg.wasm" "$root/devnode/biscuit_bg.wasm"
# fail here, not in a pod, if the bundle does not load, or loads the Biscuit library badly or noisily
"$node_bin" "$root/devnode/devnode.mjs" --help >/dev/null
probe=$w/probe
check_out=$("$node_bin" --input-type=module -e "
  import { spawn } from 'node:child_process';
  const child = spawn(process.execPath, ['$root/devnode/devnode.mjs', '$probe', '--daemon-listening-port', '1', '--ldk-peer-listening-port', '2',
    '--network', 'regtest', '--root-public-key', 'ab'.repeat(32)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; child.stdout.on('data', (c) => (out += c)); child.stderr.on('data', (c) => (out += c));
  child.on('exit', (code) => { process.stdout.write(out); process.exit(code === 1 ? 0 : 1); });" 2>&1) ||
  { echo "$0: the bundled devnode did not refuse an invalid root key as expected: $check_out" >&2; exit 1; }
case $check_out in
  *'The provided root public key is invalid'*) ;;
  *) echo "$0: the bundled devnode could not load the Biscuit library: $check_out" >&2; exit 1 ;;
esac
case $check_out in *Warning*) echo "$0: the bundled devnode warns: $check_out" >&2; exit 1 ;; esac
rm -rf "$probe"

cp "$node_bin" "$root/usr/bin/node"
binaries=("$node_bin")
# the shell (/bin/sh is dash on Debian) and the tools the kubernetes runtime's exec commands use
tool_bin() { readlink -f "$(command -v "$1")" || { echo "$0: the host has no $1" >&2; exit 1; }; }
cp "$(tool_bin dash)" "$root/usr/bin/dash"
ln -s dash "$root/usr/bin/sh"
binaries+=("$(tool_bin dash)")
for tool in cat head wc mv rm mkdir du df; do
  cp "$(tool_bin "$tool")" "$root/usr/bin/$tool"
  binaries+=("$(tool_bin "$tool")")
done
ln -s usr/bin "$root/bin"
# the libraries they link against, at the paths the dynamic loader looks for them
for lib in $(ldd "${binaries[@]}" | grep -oE '/[^ ]+' | grep -v ':$' | sort -u); do
  [ -e "$root$lib" ] && continue
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'devnode:x:1000:1000:devnode:/tmp:/sbin/nologin' >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'devnode:x:1000:' >"$root/etc/group"
chmod -R u=rwX,go=rX "$root/usr" "$root/devnode" "$root/etc" "$root/lib"* 2>/dev/null || true

images=()
for arg in "$@"; do
  ref=$arg
  [[ "${arg##*/}" == *:* ]] || ref=localhost/devnode:$arg
  version=${ref##*:}
  images+=("$(REF=$ref VERSION=$version node -e 'process.stdout.write(JSON.stringify({
    ref: process.env.REF,
    config: {
      Entrypoint: ["/usr/bin/node", "/devnode/devnode.mjs"],
      Env: ["DEVNODE_HOST=0.0.0.0", `DEVNODE_VERSION=${process.env.VERSION}`],
      User: "1000:1000",
      ExposedPorts: { "3001/tcp": {}, "9735/tcp": {} },
      Labels: { "org.opencontainers.image.title": "devnode", "org.opencontainers.image.version": process.env.VERSION },
    },
  }))')")
done
list=$(printf '%s\n' "${images[@]}" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.stringify(s.trim().split("\n").map(l=>JSON.parse(l)))))')
"$REPO/scripts/test-cluster/docker-archive.sh" "$out" "$root" "$list"
echo "$0: wrote $out ($(du -m "$out" | cut -f1) MB): $*" >&2

#!/usr/bin/env bash
# scripts/test-cluster/docker-archive.sh <out.tar> <rootfs-dir> <images-json>
#
# Writes a docker-archive tar (the format of `docker save`, which `ctr images import` reads) without
# Docker: ONE layer, the given directory as it is, shared by one or more images. images-json is a
# JSON array of {"ref": "repo:tag", "config": {...}}; each entry becomes an image with its own
# config (e.g. its own Env) on top of the same layer, so several tags cost the layer once. The
# config's Env is appended to PATH=/usr/local/bin:/usr/bin:/bin, WorkingDir defaults to /.
#
# The output is reproducible: files are stored as root:root with mtime 0 in name order, and the
# configs carry a fixed creation date, so the same input gives the same image digests (an import
# of an unchanged image is then a no-op for containerd).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 <out.tar> <rootfs-dir> <images-json>" >&2; exit 2; }
out=$(realpath -m "$1") root=$2 images=$3
[ -d "$root" ] || { echo "$0: $root is not a directory" >&2; exit 2; }

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
reproducible=(--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner)

tar -C "$root" "${reproducible[@]}" -cf "$w/layer.tar" .
diff_id=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
mkdir "$w/$diff_id"
mv "$w/layer.tar" "$w/$diff_id/layer.tar"

# configs and manifest.json (JSON written by node, so nothing needs escaping by hand)
IMAGES_JSON=$images DIFF_ID=$diff_id OUT_DIR=$w node --input-type=module -e '
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
const images = JSON.parse(process.env.IMAGES_JSON);
const diffId = process.env.DIFF_ID;
const arch = { x64: "amd64", arm64: "arm64" }[process.arch] ?? process.arch;
const created = "1970-01-01T00:00:00Z";
const manifest = images.map(({ ref, config = {} }) => {
  if (typeof ref !== "string" || !ref.includes(":")) throw new Error(`image ref must be repo:tag, got ${ref}`);
  const { Env = [], ...rest } = config;
  const image = {
    architecture: arch, os: "linux", created,
    config: { Env: ["PATH=/usr/local/bin:/usr/bin:/bin", ...Env], WorkingDir: "/", ...rest },
    rootfs: { type: "layers", diff_ids: [`sha256:${diffId}`] },
    history: [{ created, created_by: "scripts/test-cluster/docker-archive.sh" }],
  };
  const json = JSON.stringify(image);
  const name = `${createHash("sha256").update(json).digest("hex")}.json`;
  writeFileSync(`${process.env.OUT_DIR}/${name}`, json);
  return { Config: name, RepoTags: [ref], Layers: [`${diffId}/layer.tar`] };
});
writeFileSync(`${process.env.OUT_DIR}/manifest.json`, JSON.stringify(manifest));
'

# member names without "./": manifest.json refers to them by plain name
(cd "$w" && tar "${reproducible[@]}" -cf "$out.tmp" manifest.json $(ls | grep -E '^[0-9a-f]{64}\.json$') "$diff_id")
mv "$out.tmp" "$out"

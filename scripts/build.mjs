#!/usr/bin/env node
// Bundles the service into dist/rln-cloud.mjs (and dist/chunks/) for `npm start` (scripts/start.mjs): loading one
// file instead of ~200 TypeScript modules through the tsx loader cuts seconds off every start.
// Dependencies stay in node_modules; project files (migrations, web assets, devnode) are found
// from package.json (src/paths.ts). Written to a temporary file and renamed, so a service starting
// at the same moment never loads a half-written bundle.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');
export const BUNDLE = join(outdir, 'rln-cloud.mjs');

/** Whether a source file changed after the bundle was written (or there is no bundle). */
export function bundleIsStale() {
  let built;
  try {
    built = statSync(BUNDLE).mtimeMs;
  } catch {
    return true;
  }
  const newer = (dir) =>
    readdirSync(dir, { withFileTypes: true }).some((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? newer(path) : statSync(path).mtimeMs > built;
    });
  return newer(join(root, 'src')) || statSync(join(root, 'package-lock.json')).mtimeMs > built;
}

// Node's ES module wrapper of a built-in module reads every export as it is created, lazy getters
// included: `import http from 'node:http'` loads undici for http.WebSocket (tens of milliseconds
// at every start), `require('node:http')` does not. So the bundle takes the built-ins it imports
// through require (a `require` of its own, in the banner), as the CommonJS dependencies already do.
const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) =>
      // The wrapper's own require stays a require of the built-in, and so does a dynamic import (a
      // split chunk of the wrapper would offer only a default export to destructure).
      args.namespace === 'builtin' || args.kind === 'dynamic-import' ? { path: args.path, external: true } : { path: args.path, namespace: 'builtin' },
    );
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

// Dependencies stay in node_modules, but TypeBox: its ~270 ES modules, each found, read and linked
// on its own, took ~70 ms of every start; bundled they are a part of one file.
const dependenciesExternalButTypebox = {
  name: 'dependencies-external-but-typebox',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@sinclair/typebox') ? undefined : { path: args.path, external: true }));
  },
};

export async function buildBundle() {
  const { build } = await import('esbuild'); // only when a build is needed
  const result = await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Dynamic imports stay separate chunks, loaded when reached: the S3 client only with BLOB_STORE=s3,
    // and the service itself while the database opens (see serve in src/main.ts).
    splitting: true,
    entryNames: 'rln-cloud',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    plugins: [builtinsThroughRequire, dependenciesExternalButTypebox],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    sourcemap: 'inline',
    outdir,
    write: false,
    logLevel: 'warning',
    // @biscuit-auth/biscuit-wasm's package.json has "sideEffects": "false" (a string where esbuild
    // wants a boolean): a warning at every build about the package, not about the service.
    logOverride: { 'package.json': 'silent' },
  });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }

  // Chunks of earlier builds: removed once no service that is still starting could be loading them.
  const current = new Set(result.outputFiles.map((f) => f.path));
  const chunksDir = join(outdir, 'chunks');
  for (const name of readdirSync(chunksDir)) {
    const path = join(chunksDir, name);
    if (!current.has(path) && Date.now() - statSync(path).mtimeMs > 10 * 60_000) rmSync(path, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildBundle();

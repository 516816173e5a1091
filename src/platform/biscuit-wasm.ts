// Eclipse Biscuit (@biscuit-auth/biscuit-wasm, the Rust implementation RLN itself uses, compiled to
// WebAssembly), loaded by hand. The package's entry imports its .wasm as an ES module, which Node 24
// runs only as an experimental feature (a warning on stderr at every start) and esbuild cannot
// bundle; so this file imports the package's JavaScript glue by its path, compiles the .wasm it
// reads from disk and hands the instance to the glue, as the entry would. The same code then runs
// under tsx, vitest, the service's bundle (dist/) and devnode's one-file bundle in its image.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as BiscuitApi from '@biscuit-auth/biscuit-wasm';
// @ts-expect-error the glue has no type declarations of its own; it is typed as the entry below
import * as untypedGlue from '../../node_modules/@biscuit-auth/biscuit-wasm/module/biscuit_bg.js';

export type Biscuits = typeof BiscuitApi;

interface Glue {
  __wbg_set_wasm(exports: WebAssembly.Exports): void;
}

const WASM_FILE = 'biscuit_bg.wasm';
const PACKAGE_WASM = join('node_modules', '@biscuit-auth', 'biscuit-wasm', 'module', WASM_FILE);

/**
 * Where the .wasm is: beside the running file (devnode's image copies it next to its bundle), else in
 * the node_modules of the first directory above that has the package (the sources and dist/ alike).
 */
export function biscuitWasmPath(from = dirname(fileURLToPath(import.meta.url))): string {
  if (existsSync(join(from, WASM_FILE))) return join(from, WASM_FILE);
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, PACKAGE_WASM))) return join(dir, PACKAGE_WASM);
    if (dirname(dir) === dir) throw new Error(`${WASM_FILE} of @biscuit-auth/biscuit-wasm not found above ${from}`);
  }
}

let loaded: Biscuits | undefined;

/** The Biscuit API, compiled on first use (tens of milliseconds, once per process). */
export function biscuits(): Biscuits {
  if (loaded) return loaded;
  const glue = untypedGlue as Glue & Biscuits;
  const module = new WebAssembly.Module(readFileSync(biscuitWasmPath()));
  const instance = new WebAssembly.Instance(module, importsFor(module, glue as unknown as WebAssembly.ModuleImports));
  glue.__wbg_set_wasm(instance.exports);
  // The start function installs the panic hook and greets on console.log ("biscuit-wasm loading"),
  // which would land in the service's and devnode's logs as a stray line.
  const log = console.log;
  console.log = () => {};
  try {
    (instance.exports.__wbindgen_start as () => void)();
  } finally {
    console.log = log;
  }
  warmUp(glue);
  loaded = glue;
  return glue;
}

/**
 * Mints and authorizes one throwaway token: the first authorization of a process runs cold (over
 * 100 ms on a busy machine), which would exceed any sensible run limit on a caller's first request.
 */
function warmUp(lib: Biscuits): void {
  const keys = new lib.KeyPair(lib.SignatureAlgorithm.Ed25519);
  const builder = new lib.BiscuitBuilder();
  builder.addCode('role("warm-up"); check if time($t), $t > 2000-01-01T00:00:00Z;');
  const token = builder.build(keys.getPrivateKey());
  const authorizerBuilder = new lib.AuthorizerBuilder();
  authorizerBuilder.addCodeWithParameters('time({now}); allow if role("warm-up");', { now: { date: new Date().toISOString() } }, {});
  const authorizer = authorizerBuilder.buildAuthenticated(token);
  authorizer.authorizeWithLimits({ max_facts: 1000, max_iterations: 100, max_time_micro: 10_000_000 });
  authorizer.free();
  token.free();
  keys.free();
}

/**
 * What the module imports: the glue, and the package's inline snippets, each of which is the one
 * function `performance_now` (the authorizer's clock for its time limit). Anything else means a new
 * version of the package needs a look here, so it fails at once rather than at a first token.
 */
function importsFor(module: WebAssembly.Module, glue: WebAssembly.ModuleImports): WebAssembly.Imports {
  const imports: WebAssembly.Imports = {};
  for (const { module: name, name: field } of WebAssembly.Module.imports(module)) {
    if (name === './biscuit_bg.js') imports[name] = glue;
    else if (/^\.\/snippets\/[\w-]+\/inline\d+\.js$/.test(name) && field === 'performance_now') {
      imports[name] = { performance_now: () => performance.now() };
    } else throw new Error(`@biscuit-auth/biscuit-wasm imports ${name} ${field}, which this loader does not provide`);
  }
  return imports;
}

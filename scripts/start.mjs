#!/usr/bin/env node
// `npm start`: rebuilds the bundle when a source changed since it was built, then runs
// `rln-cloud serve` from it, all in this one process (no second Node start-up on the way).
import module from 'node:module';
import { BUNDLE, buildBundle, bundleIsStale } from './build.mjs';
import { pathToFileURL } from 'node:url';

// V8's compiled code of the bundle and its dependencies, kept on disk between starts (in the
// system's temporary directory unless NODE_COMPILE_CACHE says where): a start then skips
// compiling most of the modules it loads. A cache that is missing or stale is rebuilt.
module.enableCompileCache?.();

if (bundleIsStale()) await buildBundle();
process.argv.splice(2, process.argv.length - 2, 'serve', ...process.argv.slice(2));
await import(pathToFileURL(BUNDLE).href);

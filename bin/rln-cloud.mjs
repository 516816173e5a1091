#!/usr/bin/env -S node --liftoff-only --max-semi-space-size=4
// Launcher for the operator CLI. It runs the bundle `npm start` runs (scripts/build.mjs), rebuilt
// first when a source changed since: through tsx's loader the ~150 TypeScript modules an operator
// command loads took longer than the command itself. Everything is found from this file's own
// location, so `npx rln-cloud` works from any working directory. The V8 flags are `npm start`'s
// (docs/OPERATIONS.md, "Footprint: memory and start-up"): a command that opens PGlite starts faster and smaller with them.
import module from 'node:module';
import { pathToFileURL } from 'node:url';
import { BUNDLE, buildBundle, bundleIsStale } from '../scripts/build.mjs';

// V8's compiled code kept between runs, as npm start keeps it (scripts/start.mjs).
module.enableCompileCache?.();

if (bundleIsStale()) await buildBundle();
await import(pathToFileURL(BUNDLE).href);

#!/usr/bin/env node
// `npm start`: rebuilds the bundle when a source changed since it was built, then runs
// `rln-cloud serve` from it, all in this one process (no second Node start-up on the way).
import { BUNDLE, buildBundle, bundleIsStale } from './build.mjs';
import { pathToFileURL } from 'node:url';

if (bundleIsStale()) await buildBundle();
process.argv.splice(2, process.argv.length - 2, 'serve', ...process.argv.slice(2));
await import(pathToFileURL(BUNDLE).href);

#!/usr/bin/env -S node --liftoff-only --max-semi-space-size=4
// Launcher for the operator CLI. The sources are TypeScript run through tsx's loader, so there is
// no build step between `npm ci` and `npm start`; the loader is registered from this file's own
// location, so `npx rln-cloud` works from any working directory. The V8 flags are `npm start`'s
// (README, "Memory"): a command that opens PGlite starts faster and smaller with them.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');

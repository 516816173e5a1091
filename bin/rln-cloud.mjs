#!/usr/bin/env node
// Launcher for the operator CLI. The sources are TypeScript run through tsx's loader, so there is
// no build step between `npm ci` and `npm start`; the loader is registered from this file's own
// location, so `npx rln-cloud` works from any working directory.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');

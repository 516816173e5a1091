#!/usr/bin/env node
// Launcher for devnode, the RLN-compatible development daemon (see devnode/README.md).
// Takes the same command line as rgb-lightning-node.
import { register } from 'tsx/esm/api';

register();
await import('../devnode/main.ts');

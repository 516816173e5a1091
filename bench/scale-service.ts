// The service for bench/scale.ts, in a process of its own so its resident memory is its own: the
// whole service (API, workers, reconcile loop, gateways) from the environment's configuration, on
// the in-memory runtime, which starts no daemons: what grows with the fleet is the control plane.
// Prints one line, `ready`, once it serves; stops on SIGTERM.
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/app.ts';
import { InMemoryRuntimeForTests } from '../src/runtime/in-memory-for-tests.ts';

const runtime = await new InMemoryRuntimeForTests().listen();
const server = await startServer(loadConfig(), createLogger('silent'), undefined, { runtime });
console.log('ready');
process.once('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});

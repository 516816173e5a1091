// devnode: an RLN-compatible development daemon (see README.md in this folder). Same command line
// as rgb-lightning-node; serves RLN's lifecycle endpoints on the daemon port and holds the
// Lightning peer port.
import http from 'node:http';
import net from 'node:net';
import { ArgsError, parseDaemonArgs } from './args.ts';
import { WalletStore } from './state.ts';
import { readBody, RlnError, route } from './routes.ts';

const log = (level: string, message: string) => process.stdout.write(`${new Date().toISOString()} ${level} ${message}\n`);

let args;
try {
  args = parseDaemonArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof ArgsError)) throw err;
  process.stderr.write(`devnode: ${err.message}\nusage: devnode <storage_dir> --daemon-listening-port <n> --ldk-peer-listening-port <n> --network <net> (--disable-authentication | --root-public-key <hex>)\n`);
  process.exit(2);
}

const version = process.env.DEVNODE_VERSION || 'devnode';
// Versions named fail-* stand for a broken image, so upgrade rollback can be exercised for real.
if (version.startsWith('fail-')) {
  log('ERROR', `image version ${version} is broken: refusing to start`);
  process.exit(1);
}

const wallet = new WalletStore(args.storageDir);
const host = process.env.DEVNODE_HOST || '127.0.0.1';
const rootKey = args.rootPublicKey;

const shutdown = (why: string) => {
  log('INFO', `shutting down (${why})`);
  api.close();
  peers.close();
  setTimeout(() => process.exit(0), 50).unref();
};

const api = http.createServer(async (req, res) => {
  const started = performance.now();
  const path = (req.url ?? '/').split('?')[0]!;
  let status = 500;
  let body: unknown;
  try {
    const raw = await readBody(req);
    if (rootKey && !/^Bearer\s+\S+/i.test(req.headers.authorization ?? '')) {
      ({ status, body } = { status: 401, body: { error: 'Missing or invalid credentials', code: 401, name: 'Unauthorized' } });
    } else {
      ({ status, body } = route({ wallet, network: args.network, requestShutdown: () => setImmediate(() => shutdown('POST /shutdown')) }, req.method ?? 'GET', path, raw));
    }
  } catch (err) {
    status = err instanceof RlnError ? err.status : 500;
    body = { error: err instanceof Error ? err.message : 'Internal error', code: status, name: err instanceof RlnError ? err.rlnName : 'Unexpected' };
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  // Method, path and status only: request bodies carry passwords and are never logged.
  log('INFO', `${req.method} ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`);
});

// RLN listens for Lightning peers here; devnode only holds the port.
const peers = net.createServer((socket) => socket.destroy());

api.on('error', (err) => {
  log('ERROR', `cannot listen on ${host}:${args.daemonPort}: ${err.message}`);
  process.exit(1);
});
peers.on('error', (err) => {
  log('ERROR', `cannot listen on ${host}:${args.peerPort}: ${err.message}`);
  process.exit(1);
});
api.listen(args.daemonPort, host, () => {
  peers.listen(args.peerPort, host, () => {
    log('INFO', `devnode ${version} started: network ${args.network}, REST ${host}:${args.daemonPort}, peers ${host}:${args.peerPort}, ` +
      `${wallet.state.initialized ? 'initialized' : 'not initialized'}, locked`);
  });
});

process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

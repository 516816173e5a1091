// One running devnode: the REST server and the peer port, started and stopped together.
import type http from 'node:http';
import type net from 'node:net';
import type { DaemonArgs } from './args.ts';
import { createApiServer } from './api-server.ts';
import type { Logger } from './log.ts';
import { createPeerServer } from './peer-server.ts';
import type { TokenGate } from './token-gate.ts';
import type { Wallet } from './wallet.ts';

export interface DaemonDeps {
  args: DaemonArgs;
  host: string;
  wallet: Wallet;
  log: Logger;
  /** RLN's authentication, made by main.ts from --root-public-key; undefined when disabled. */
  tokens: TokenGate | undefined;
  /** How long a wallet sync takes (DEVNODE_SYNC_DELAY_MS). */
  syncDelayMs: number;
  onShutdownRequested(): void;
}

/** How long open keep-alive connections may delay an exit before they are cut. */
const CLOSE_GRACE_MS = 2000;

export class Daemon {
  private readonly api: http.Server;
  private readonly peers: net.Server;

  constructor(private readonly deps: DaemonDeps) {
    this.api = createApiServer({
      wallet: deps.wallet,
      network: deps.args.network,
      log: deps.log,
      tokens: deps.tokens,
      syncDelayMs: deps.syncDelayMs,
      onShutdownRequested: deps.onShutdownRequested,
    });
    this.peers = createPeerServer();
  }

  /** Rejects with RLN's "Port N is unavailable" when a port is taken. */
  async start(): Promise<void> {
    await listen(this.api, this.deps.host, this.deps.args.daemonPort);
    try {
      await listen(this.peers, this.deps.host, this.deps.args.peerPort);
    } catch (err) {
      this.api.close();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const apiClosed = new Promise<void>((resolve) => this.api.close(() => resolve()));
    const peersClosed = new Promise<void>((resolve) => this.peers.close(() => resolve()));
    this.api.closeIdleConnections();
    const cut = setTimeout(() => this.api.closeAllConnections(), CLOSE_GRACE_MS);
    await Promise.all([apiClosed, peersClosed]);
    clearTimeout(cut);
  }
}

function listen(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(new Error(err.code === 'EADDRINUSE' ? `Port ${port} is unavailable` : `cannot listen on ${host}:${port}: ${err.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

// devnode's REST server: authentication, routing, guards, one error handler and one log line per
// request. Built on node:http alone so devnode starts in a fraction of a second.
import http from 'node:http';
import type { DaemonNetwork } from './args.ts';
import { RlnError } from './errors.ts';
import type { Logger } from './log.ts';
import { BodyFields, readRequestBody } from './request-body.ts';
import type { RouteContext } from './route.ts';
import { findRoute, knownPath } from './routes.ts';
import type { TokenGate } from './token-gate.ts';
import type { Wallet } from './wallet.ts';

export interface ApiServerDeps {
  wallet: Wallet;
  network: DaemonNetwork;
  log: Logger;
  /** Set when started with --root-public-key: every request must then carry a biscuit allowing it. */
  tokens: TokenGate | undefined;
  /** How long a wallet sync with the indexer takes (DEVNODE_SYNC_DELAY_MS). */
  syncDelayMs: number;
  /** Called after POST /shutdown has been answered. */
  onShutdownRequested(): void;
}

interface Reply {
  status: number;
  body: unknown;
}

export function createApiServer(deps: ApiServerDeps): http.Server {
  return http.createServer((req, res) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    // The query string is dropped, from routing and from the log line alike.
    const path = (req.url ?? '/').split('?')[0]!;
    let shutdownAfterReply = false;
    const ctx: RouteContext = {
      wallet: deps.wallet,
      network: deps.network,
      log: deps.log,
      identity: undefined,
      tokens: deps.tokens,
      syncWallet: () => new Promise((resolve) => setTimeout(resolve, deps.syncDelayMs)),
      requestShutdown: () => {
        shutdownAfterReply = true;
      },
    };

    void answer(deps, ctx, req, method, path).then(({ status, body }) => {
      // 'close' also fires when the client hung up early, so a requested shutdown still happens.
      res.once('close', () => {
        // Method, path and status only: bodies carry passwords and mnemonics and are never logged.
        const line = `${method} ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`;
        if (status >= 500) deps.log.error(line);
        else deps.log.info(line);
        if (shutdownAfterReply) deps.onShutdownRequested();
      });
      // With its length, as RLN answers (hyper sets Content-Length on axum's whole JSON bodies);
      // writeHead without one makes node:http answer chunked, which RLN does not for these bodies.
      const text = toJson(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  });
}

async function answer(deps: ApiServerDeps, ctx: RouteContext, req: http.IncomingMessage, method: string, path: string): Promise<Reply> {
  try {
    // RLN's authentication is a layer on its routes: an unknown path is a 404 before any token
    // check, a known path with the wrong method is checked first (axum's 405 is inside the route).
    if (deps.tokens && knownPath(path)) deps.tokens.check(req.headers.authorization, path);
    const route = findRoute(method, path);
    // Like axum extractors in RLN, the body is read and checked before the node state.
    const body = route.jsonBody ? BodyFields.parse(await readRequestBody(req)) : BodyFields.of({});
    if (route.guard === 'unlocked') ctx.identity = deps.wallet.requireUnlocked();
    return { status: 200, body: await route.handle(ctx, body) };
  } catch (err) {
    if (err instanceof RlnError) return { status: err.status, body: err.toBody() };
    deps.log.error(`${method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
    const unexpected = new RlnError('Unexpected', 'see the devnode log');
    return { status: unexpected.status, body: unexpected.toBody() };
  }
}

/** JSON.stringify that writes bigints as exact integers (RLN reports u64::MAX in /nodeinfo). */
function toJson(value: unknown): string {
  const marker = '\u0000bigint:';
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? marker + v.toString() : v)).replace(
    /"\\u0000bigint:(\d+)"/g,
    '$1',
  );
}

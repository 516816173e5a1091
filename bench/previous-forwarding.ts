// The forwarding path the RLN client (src/rln/) replaced, measured side by side with it: the
// hand-written HTTP/1.1 exchange, parser and connection pool (src/gateway/node-connector.ts and
// the files it used), read from git at the commit before the one that removed them and loaded into
// this process from a temporary directory. The bench puts it under the very same bearer gateway
// (createBearerGateway with the same access checks, unlock and node records), so the two rows
// differ only in how a request reaches the node.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RlnClient } from '../src/rln/client.ts';
import type { ForwardedRequest } from '../src/rln/forward.ts';

const REMOVED = 'src/gateway/node-connector.ts';
// Everything node-connector.ts reached, as it was (type-only imports are erased by tsx).
const FILES = [
  'src/gateway/node-connector.ts',
  'src/gateway/node-exchange.ts',
  'src/gateway/node-connection-pool.ts',
  'src/gateway/node-answer-parser.ts',
  'src/gateway/forward-headers.ts',
  'src/gateway/gateway-reply.ts',
  'src/errors.ts',
  'src/http/unread-body.ts',
];

interface PreviousConnector {
  forward(req: IncomingMessage, res: ServerResponse, endpoint: { host: string; port: number }, path: string, client: ForwardedRequest['client'], requestId: string, onAnswer?: (status: number) => Promise<void>): void;
  close(): void;
}

export interface PreviousForwarding {
  /** The commit the files were read from. */
  commit: string;
  /** An RlnClient's `forward` and `call` for the gateway: forwarding on the previous path, the rest on `current`. */
  asClient(current: RlnClient): Pick<RlnClient, 'forward' | 'call'>;
  close(): void;
}

/** Loads the previous path from git into `dir`, or says why it cannot. */
export async function loadPreviousForwarding(dir: string, limits: { timeoutMs: number; maxRequestBytes: number; maxResponseBytes: number }): Promise<PreviousForwarding | { skipped: string }> {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: join(import.meta.dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  let commit: string;
  try {
    const removedIn = git('log', '-1', '--format=%H', '--diff-filter=D', '--', REMOVED).trim();
    if (!removedIn) return { skipped: `no commit removed ${REMOVED}` };
    commit = git('rev-parse', `${removedIn}^`).trim();
    for (const file of FILES) {
      const target = join(dir, file);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, git('show', `${commit}:${file}`));
    }
  } catch (err) {
    return { skipped: `the previous path could not be read from git: ${(err as Error).message.split('\n')[0]}` };
  }
  const { NodeConnector } = (await import(pathToFileURL(join(dir, REMOVED)).href)) as { NodeConnector: new (o: typeof limits) => PreviousConnector };
  const connector = new NodeConnector(limits);
  return {
    commit: commit.slice(0, 7),
    asClient: (current) => ({
      forward: (r: ForwardedRequest) => connector.forward(r.req, r.res, r.endpoint, r.path, r.client, 'bench', r.onAnswer),
      call: (...args: Parameters<RlnClient['call']>) => current.call(...args),
    }),
    close: () => connector.close(),
  };
}

// The gateways' forwarding through undici's dispatch, measured side by side with the hand-written
// path the RLN client forwards on (src/rln/forward.ts says why it does): rln/forward.ts as it was
// when it forwarded through undici, read from git at the commit before the one that moved the
// forwarding back to src/rln/forwarding/, and loaded into this process. The bench puts it under the
// very same bearer gateway (createBearerGateway with the same access checks, unlock and node
// records), so the two rows differ only in how a request reaches the node.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { RlnClient } from '../src/rln/client.ts';
import type { ForwardedRequest, ForwardLimits } from '../src/rln/forward.ts';

const FORWARD = 'src/rln/forward.ts';
// What that forward.ts reached, at their paths of that commit (type-only imports are erased by tsx).
const FILES = [FORWARD, 'src/rln/failures.ts', 'src/rln/forward-headers.ts', 'src/errors.ts', 'src/http/unread-body.ts'];
const REPO = join(import.meta.dirname, '..');
// Inside the repository (and ignored by git), so that the loaded files resolve `undici` from its node_modules.
const DIR = join(REPO, '.bench-undici-forwarding');

interface UndiciForward {
  forwardToNode(dispatcher: Dispatcher, limits: ForwardLimits, r: ForwardedRequest): void;
  watchResets(socket: Socket): void;
}

export interface UndiciForwarding {
  /** The commit the files were read from. */
  commit: string;
  /** An RlnClient's `forward` and `call` for the gateway: forwarding through undici, the rest on `current`. */
  asClient(current: RlnClient): Pick<RlnClient, 'forward' | 'call'>;
  close(): Promise<void>;
}

// Nodes run with RLN's authentication since issue #40: the gateway sends the node the service's
// Biscuit (endpoint.authorization), which that forward.ts predates. Added to the headers it sends,
// as the current path adds it (rln/forwarding/request-head.ts), so both rows make the same request.
const HEADERS_THEN = 'headers: headersToNode(req.rawHeaders, client),';
const HEADERS_WITH_BISCUIT =
  "headers: endpoint.authorization === undefined ? headersToNode(req.rawHeaders, client) : [...headersToNode(req.rawHeaders, client), 'Authorization', endpoint.authorization],";
function withNodeBiscuit(source: string): string {
  if (!source.includes(HEADERS_THEN)) throw new Error(`${FORWARD} of that commit does not build its headers as expected`);
  return source.replace(HEADERS_THEN, HEADERS_WITH_BISCUIT);
}

/** Loads the undici forwarding from git, or says why it cannot. */
export async function loadUndiciForwarding(limits: ForwardLimits): Promise<UndiciForwarding | { skipped: string }> {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  let commit: string;
  try {
    // The newest change of forward.ts that took undici's dispatch out; its parent still forwards through it.
    const movedBack = git('log', '-1', '--format=%H', '-G', 'Dispatcher.DispatchHandler', '--', FORWARD).trim();
    if (!movedBack) return { skipped: `no commit of ${FORWARD} forwards through undici` };
    commit = git('rev-parse', `${movedBack}^`).trim();
    rmSync(DIR, { recursive: true, force: true });
    for (const file of FILES) {
      const target = join(DIR, file);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, file === FORWARD ? withNodeBiscuit(git('show', `${commit}:${file}`)) : git('show', `${commit}:${file}`));
    }
  } catch (err) {
    return { skipped: `the undici forwarding could not be read from git: ${(err as Error).message.split('\n')[0]}` };
  }
  const loaded = (await import(pathToFileURL(join(DIR, FORWARD)).href)) as UndiciForward;
  // The Agent the RLN client built for it then: kept alive per node, 128 at most, idle 4 s.
  const connect = buildConnector({ timeout: limits.timeoutMs });
  const agent = new Agent({
    connections: 128,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 4_000,
    connect: (options, callback) =>
      connect(options, (...args) => {
        if (args[1]) loaded.watchResets(args[1] as Socket);
        callback(...args);
      }),
  });
  return {
    commit: commit.slice(0, 7),
    asClient: (current) => ({
      forward: (r: ForwardedRequest) => loaded.forwardToNode(agent, limits, r),
      call: (...args: Parameters<RlnClient['call']>) => current.call(...args),
    }),
    close: async () => {
      await agent.destroy();
      rmSync(DIR, { recursive: true, force: true });
    },
  };
}

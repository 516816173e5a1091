// The shape of one devnode endpoint. Routes are plain declarations, registered explicitly in
// routes.ts and run by api-server.ts, which applies the guard before the handler.
import type { DaemonNetwork } from './args.ts';
import type { Logger } from './log.ts';
import type { BodyFields } from './request-body.ts';
import type { TokenGate } from './token-gate.ts';
import type { NodeIdentity, Wallet } from './wallet.ts';

export interface RouteContext {
  wallet: Wallet;
  network: DaemonNetwork;
  log: Logger;
  /** Set by routes with the `unlocked` guard: the identity of the unlocked node. */
  identity: NodeIdentity | undefined;
  /** A wallet sync with the indexer: there is nothing to sync, it only takes DEVNODE_SYNC_DELAY_MS. */
  syncWallet(): Promise<void>;
  /** RLN's authentication when started with --root-public-key; undefined when disabled. */
  tokens: TokenGate | undefined;
  /** Asks for a clean exit once the current response has been sent. */
  requestShutdown(): void;
}

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  /**
   * `unlocked`: the server checks the node is unlocked first (RLN's check_unlocked), so such a
   * route cannot forget it. `lifecycle`: the wallet operation the handler calls checks the state
   * itself, in the same step that marks the state as changing. `none`: RLN does not look at the
   * node state at all (POST /revoketoken).
   */
  guard: 'unlocked' | 'lifecycle' | 'none';
  /** Whether the endpoint takes a JSON body; RLN does not read the body of the others. */
  jsonBody: boolean;
  handle(ctx: RouteContext, body: BodyFields): unknown;
}

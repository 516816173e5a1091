// The Biscuits the service sends nodes (issue #40): one per node and role, minted with the node's
// root key (node-root-keys.ts) and reused until shortly before it expires, so a request pays a Map
// lookup, not a mint (about 1-2 ms of WebAssembly) or a database read. Short-lived: a token that
// leaks (a node's log, a dump) is worth minutes.
//
// It is also what the runtime asks for a node's public key (NodeRootKeys): a key created for a start
// drops what this process remembered about the node at once; another replica notices within
// NO_KEY_RECHECK_MS.
import type { Logger } from '../logger.ts';
import { mintNodeToken } from '../rln/biscuit-mint.ts';
import type { NodeBearers, NodeCallerRole } from '../rln/node-bearer.ts';
import type { NodeRootKeys } from '../runtime/types.ts';
import type { NodeRootKeyStore } from './node-root-keys.ts';

/** How long a minted token is valid. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** A cached token is replaced this long before it expires, so none expires on its way to the node. */
export const RENEW_BEFORE_MS = 2 * 60_000;
/** How long "this node has no root key" is believed before the database is asked again. */
export const NO_KEY_RECHECK_MS = 5_000;

interface Cached {
  authorization: string | undefined;
  /** After this (ms since the epoch) the entry is renewed. */
  renewAt: number;
}

export class NodeBiscuits implements NodeBearers, NodeRootKeys {
  private readonly cache = new Map<string, Cached>();
  private readonly minting = new Map<string, Promise<string | undefined>>();
  /**
   * Bumped by forget(): a mint that read "no key" before the runtime created one must not store
   * that answer after it (seen: a status probe racing a node's first start, then its init refused).
   */
  private readonly generations = new Map<string, number>();

  constructor(private readonly deps: { keys: NodeRootKeyStore; log: Logger; now?: () => number }) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  authorization(nodeId: string, role: NodeCallerRole): string | undefined | Promise<string | undefined> {
    const key = `${nodeId}\0${role}`;
    const cached = this.cache.get(key);
    if (cached && cached.renewAt > this.now()) return cached.authorization;
    let pending = this.minting.get(key);
    if (!pending) {
      const minted = this.mint(nodeId, role, key).finally(() => {
        if (this.minting.get(key) === minted) this.minting.delete(key);
      });
      pending = minted;
      this.minting.set(key, pending);
    }
    return pending;
  }

  async publicKeyFor(nodeId: string): Promise<string> {
    const publicKey = await this.deps.keys.publicKeyFor(nodeId);
    this.forget(nodeId); // a key created just now: "no key" must not be believed any longer
    return publicKey;
  }

  /** Drops what is remembered about a node (its key was created, or the node is gone). */
  forget(nodeId: string): void {
    this.generations.set(nodeId, (this.generations.get(nodeId) ?? 0) + 1);
    for (const key of this.cache.keys()) if (key.startsWith(`${nodeId}\0`)) this.cache.delete(key);
    for (const key of this.minting.keys()) if (key.startsWith(`${nodeId}\0`)) this.minting.delete(key);
  }

  private async mint(nodeId: string, role: NodeCallerRole, key: string): Promise<string | undefined> {
    const generation = this.generations.get(nodeId) ?? 0;
    const privateKey = await this.deps.keys.privateKeyOf(nodeId);
    const now = this.now();
    if (!privateKey) {
      if ((this.generations.get(nodeId) ?? 0) === generation) {
        this.cache.set(key, { authorization: undefined, renewAt: now + NO_KEY_RECHECK_MS });
      }
      return undefined;
    }
    const { token } = mintNodeToken(privateKey, { role, expiresAt: new Date(now + TOKEN_LIFETIME_MS) });
    privateKey.fill(0);
    const authorization = `Bearer ${token}`;
    this.cache.set(key, { authorization, renewAt: now + TOKEN_LIFETIME_MS - RENEW_BEFORE_MS });
    this.deps.log.debug({ nodeId, role }, 'minted a node Biscuit');
    return authorization;
  }
}

// RLN's authentication, as its middleware applies it when started with --root-public-key (RLN's
// src/auth.rs, from commit 4a3d7cd on): the request must carry `Authorization: Bearer <biscuit>`
// (that exact prefix), a token signed by the root key, none of whose revocation identifiers was
// revoked and whose own checks pass at the current time; then
//   role("admin")      may call every route,
//   role("read-only")  only the read-only routes below, anything else is 403 Forbidden,
//   role("custom")     the routes it holds right("api", <route>) for, anything else is 403,
// and a token with none of these roles is 401. The token is checked before anything else of the
// request, the body and the node state included.
import type { Authorizer, Biscuit, PublicKey } from '@biscuit-auth/biscuit-wasm';
import { biscuits } from '../src/platform/biscuit-wasm.ts';
import { RlnError } from './errors.ts';
import type { RevokedTokens } from './revoked-tokens.ts';

/** RLN's READ_ONLY_OPS: what role("read-only") may call. */
export const READ_ONLY_ROUTES: ReadonlySet<string> = new Set([
  '/assetbalance',
  '/assetmetadata',
  '/btcbalance',
  '/checkindexerurl',
  '/checkproxyendpoint',
  '/decodelninvoice',
  '/decodergbinvoice',
  '/decodeswapstring',
  '/estimatefee',
  '/getassetmedia',
  '/getchannelid',
  '/getconsignment',
  '/getpayment',
  '/getswap',
  '/invoicestatus',
  '/listassets',
  '/listchannels',
  '/listpayments',
  '/listpeers',
  '/listswaps',
  '/listtransactions',
  '/listtransfers',
  '/listunspents',
  '/networkinfo',
  '/nodeinfo',
]);

/**
 * Explicit bounds for every authorization. The library's default time limit (1 ms) is shorter than
 * a cold process's first run (the library's loader does that run, see biscuit-wasm.ts) and than a
 * warm one on a loaded machine (a few ms at a load of 15 on 2 cores, and 50 ms was seen exceeded);
 * a refused token would be a false 401. The fact and iteration bounds are what keep a token's
 * appended blocks from making a node work long; the time bound is only the backstop, and it is
 * wall-clock time: a process the machine does not schedule for a moment must not refuse a good
 * token (a new node's init was refused once in CI at a load of 4-15 with 250 ms, the likeliest
 * cause), so it is 2 s.
 */
export const RUN_LIMITS = { max_facts: 1000, max_iterations: 100, max_time_micro: 2_000_000 };

type Token = Biscuit;

/**
 * How long a decision about one token and route is reused. RLN checks every request natively (tens
 * of microseconds); through WebAssembly a check costs devnode about a millisecond, which would make
 * devnode, not the gateway, what the gateway benchmark measures. A second is short against any
 * token's lifetime; a revocation clears the memo at once.
 */
const DECISION_MEMO_MS = 1000;
const DECISION_MEMO_MAX = 1000;

export class TokenGate {
  private readonly lib = biscuits();
  private readonly rootKey: PublicKey;
  private readonly decisions = new Map<string, { refusal: 'Unauthorized' | 'Forbidden' | undefined; until: number }>();

  constructor(rootPublicKeyHex: string, private readonly revoked: RevokedTokens) {
    try {
      this.rootKey = this.lib.PublicKey.fromBytes(Buffer.from(rootPublicKeyHex, 'hex'), this.lib.SignatureAlgorithm.Ed25519);
    } catch {
      // 32 bytes that are not a point of the curve; RLN's AppError::InvalidRootKey.
      throw new Error('The provided root public key is invalid');
    }
  }

  /** Throws RLN's Unauthorized or Forbidden unless the request may call `path`. */
  check(authorization: string | undefined, path: string): void {
    const key = `${path}\0${authorization ?? ''}`;
    const now = Date.now();
    let decision = this.decisions.get(key);
    if (!decision || decision.until <= now) {
      if (this.decisions.size >= DECISION_MEMO_MAX) this.decisions.clear();
      decision = { refusal: this.decide(authorization, path), until: now + DECISION_MEMO_MS };
      this.decisions.set(key, decision);
    }
    if (decision.refusal) throw new RlnError(decision.refusal);
  }

  private decide(authorization: string | undefined, path: string): 'Unauthorized' | 'Forbidden' | undefined {
    try {
      this.checkNow(authorization, path);
      return undefined;
    } catch (err) {
      if (err instanceof RlnError && (err.rlnName === 'Unauthorized' || err.rlnName === 'Forbidden')) return err.rlnName;
      throw err;
    }
  }

  private checkNow(authorization: string | undefined, path: string): void {
    // Only this exact prefix: `bearer x`, `Bearer  x` or a bare token are all refused, as RLN does.
    if (authorization === undefined || !authorization.startsWith('Bearer ')) throw new RlnError('Unauthorized');
    const token = this.parse(authorization.slice('Bearer '.length));
    if (token === undefined) throw new RlnError('Unauthorized');
    try {
      if (this.revoked.anyRevoked(revocationIds(token))) throw new RlnError('Unauthorized');
      // Any check of the token failing at the current time (its expiry, typically) refuses it.
      if (!this.allows(token, 'allow if true;')) throw new RlnError('Unauthorized');
      if (this.allows(token, 'allow if role("admin");')) return;
      if (this.allows(token, 'allow if role("read-only");')) {
        if (READ_ONLY_ROUTES.has(path)) return;
        throw new RlnError('Forbidden');
      }
      if (this.allows(token, 'allow if role("custom");')) {
        if (this.allows(token, 'operation({op}); allow if right("api", {op});', { op: path })) return;
        throw new RlnError('Forbidden');
      }
      throw new RlnError('Unauthorized');
    } finally {
      token.free();
    }
  }

  /** POST /revoketoken: the whole token is sent; all its revocation identifiers are kept. */
  revoke(tokenBase64: string): void {
    const token = this.parse(tokenBase64);
    if (token === undefined) throw new RlnError('InvalidBiscuitToken');
    try {
      this.revoked.add(revocationIds(token));
      this.decisions.clear();
    } finally {
      token.free();
    }
  }

  private parse(base64: string): Token | undefined {
    try {
      return this.lib.Biscuit.fromBase64(base64, this.rootKey);
    } catch {
      return undefined; // not base64, not a biscuit, or not signed by the root key
    }
  }

  /** Runs one authorizer over the token with the current time, as RLN's `.time()` adds it. */
  private allows(token: Token, code: string, parameters: Record<string, string> = {}): boolean {
    const builder = new this.lib.AuthorizerBuilder();
    let authorizer: Authorizer | undefined;
    try {
      builder.addCodeWithParameters(`time({now}); ${code}`, { ...parameters, now: { date: new Date().toISOString() } }, {});
    } catch (err) {
      builder.free();
      throw err; // the code above is ours: a mistake in it is a bug, not a refusal
    }
    try {
      authorizer = builder.buildAuthenticated(token); // consumes the builder
      authorizer.authorizeWithLimits(RUN_LIMITS);
      return true;
    } catch {
      return false; // a failed check, no matching policy, or a run limit reached
    } finally {
      authorizer?.free();
    }
  }
}

function revocationIds(token: Token): string[] {
  return token.getRevocationIdentifiers().map(String);
}

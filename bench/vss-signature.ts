// npm run bench -- vss-signature: what one VSS "sigs" check costs when it is not answered from the
// second's memory (src/vss/sigs-auth.ts), for a key checked before (a node's key is the same in
// every header) and for a key never seen; every header distinct, so each one is verified. With
// libsecp256k1 (what the service uses where its addon loads) beside OpenSSL (its fallback).
import { SigsVerifier, type SignatureBackend } from '../src/vss/sigs-auth.ts';
import { newVssKey } from '../test/helpers/vss-client.ts';

export interface VssSignatureFigures {
  /** Milliseconds per check: one key, a new time (so a new header) each check. */
  seenKeyMs: number;
  /** Milliseconds per check: a key never checked before each time. */
  newKeyMs: number;
  checks: number;
}

export function benchVssSignature(backend: SignatureBackend, checks = 500): VssSignatureFigures {
  const now = Math.floor(Date.now() / 1000);
  const key = newVssKey();
  // Times within the accepted day, one per check: no header repeats.
  const seenKeyHeaders = Array.from({ length: checks }, (_, i) => key.token(now - i));
  const newKeyHeaders = Array.from({ length: checks }, () => newVssKey().token(now));
  const time = (headers: string[]) => {
    const verifier = new SigsVerifier(Date.now, backend);
    verifier.check(key.token(now - checks - 1)); // warm-up: code paths and the seen key
    const t0 = performance.now();
    for (const header of headers) if (!verifier.check(header).ok) throw new Error('a valid header was refused');
    return (performance.now() - t0) / headers.length;
  };
  return { seenKeyMs: time(seenKeyHeaders), newKeyMs: time(newKeyHeaders), checks };
}

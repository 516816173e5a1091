// One HTTP attempt of a webhook: POST the body with its headers, wait at most the timeout for the
// whole answer, and report what happened. Redirects are not followed (a redirect could lead to an
// address the target policy refuses); any answer outside 2xx is a failed attempt.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { refusedAddressKind } from './address-policy.ts';
import { guardedLookup, type ResolveForConnect } from './guarded-lookup.ts';
import { ipLiteralOf } from './target-url.ts';
import { parseRetryAfter, type AttemptResult } from './retry-policy.ts';

export interface SendOutcome extends AttemptResult {
  remoteAddress?: string;
  durationMs: number;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** Replaces the system resolver (tests of the rebinding defence). */
  resolve?: ResolveForConnect;
}

// Receivers answer with short bodies; we read at most this much so a hostile one cannot stream.
const MAX_RESPONSE_BYTES = 64 * 1024;

export class WebhookSender {
  private readonly lookup: LookupFunction | undefined;
  // Keep-alive: a busy receiver gets its deliveries over a few reused connections.
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(private readonly opts: WebhookSenderOptions) {
    this.lookup = opts.allowPrivateTargets && !opts.resolve ? undefined : guardedLookup(opts.resolve, !opts.allowPrivateTargets);
  }

  async send(target: string, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    const outcome = await this.sendOnce(target, headers, body);
    // A kept-alive connection the receiver closed while idle fails at once, before the request
    // reached it; that is not the receiver's failure, so it is retried on a fresh connection.
    return outcome.staleConnection ? this.sendOnce(target, headers, body) : outcome;
  }

  private sendOnce(target: string, headers: Record<string, string>, body: string): Promise<SendOutcome & { staleConnection?: boolean }> {
    const started = performance.now();
    const done = (r: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({ ...r, durationMs: Math.round(performance.now() - started) });
    const url = new URL(target);
    // Sockets skip the lookup for IP literals, so those are judged here.
    const literal = ipLiteralOf(url.hostname);
    const literalKind = literal && !this.opts.allowPrivateTargets ? refusedAddressKind(literal) : undefined;
    if (literalKind) {
      return Promise.resolve(done({ error: `refused: ${literal} is a ${literalKind} address; webhook targets must be public` }));
    }
    const secure = url.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendOutcome, 'durationMs'> & { staleConnection?: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const payload = Buffer.from(body);
      const req = (secure ? https : http).request(
        {
          method: 'POST',
          protocol: url.protocol,
          hostname: literal ?? url.hostname,
          port: url.port || (secure ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          agent: secure ? this.httpsAgent : this.httpAgent,
          lookup: this.lookup,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'rln-cloud-webhooks/1' },
        },
        (res) => {
          const remoteAddress = res.socket?.remoteAddress;
          const statusCode = res.statusCode ?? 0;
          const retryAfter = statusCode === 429 || statusCode === 503 ? parseRetryAfter(String(res.headers['retry-after'] ?? '')) : undefined;
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) res.destroy();
          });
          const result = { statusCode, remoteAddress, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) };
          res.on('end', () => finish(result));
          res.on('close', () => finish(result));
          res.on('error', () => finish(result));
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        finish({ error: `timed out after ${this.opts.timeoutMs} ms` });
      }, this.opts.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const refused = err.code === 'EWEBHOOKTARGET';
        if (req.reusedSocket && err.code === 'ECONNRESET') return finish({ staleConnection: true });
        finish({ error: refused ? `refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}` });
      });
      req.end(payload);
    });
  }

  close() {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

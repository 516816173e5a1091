import { describe, expect, it } from 'vitest';
import { headersToClient, headersToNode } from './forward-headers.ts';

const client = { address: '10.1.2.3', proto: 'https' as const };

describe('headersToNode', () => {
  it('drops credentials, hop-by-hop and spoofable headers, and states the real client', () => {
    const raw = [
      'Host', 'gateway.example', 'Authorization', 'Bearer rlnc_secret', 'Cookie', 'session=1',
      'Connection', 'keep-alive, X-Secret-Hop', 'X-Secret-Hop', 'x', 'Keep-Alive', 'timeout=5',
      'Transfer-Encoding', 'chunked', 'TE', 'trailers', 'Upgrade', 'websocket', 'Proxy-Authorization', 'Basic eA==',
      'X-Forwarded-For', '1.1.1.1', 'x-forwarded-host', 'evil', 'Forwarded', 'for=1.1.1.1', 'X-Real-IP', '1.1.1.1',
      'Content-Type', 'application/json', 'Content-Length', '2', 'Accept', 'a', 'Accept', 'b', 'X-Custom', 'kept',
    ];
    expect(headersToNode(raw, client)).toEqual([
      'Content-Type', 'application/json', 'Content-Length', '2', 'Accept', 'a', 'Accept', 'b', 'X-Custom', 'kept',
      'X-Forwarded-For', '10.1.2.3', 'X-Forwarded-Proto', 'https',
    ]);
  });
});

describe('headersToNode with more than one Connection header', () => {
  it('drops what a later Connection header names, after a plain keep-alive one', () => {
    const raw = ['Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'Connection', 'X-Private', 'X-Private', 'hop', 'X-Kept', '1'];
    expect(headersToNode(raw, client)).toEqual(['X-Kept', '1', 'X-Forwarded-For', '10.1.2.3', 'X-Forwarded-Proto', 'https']);
  });
});

describe('headersToClient', () => {
  it("passes the node's headers on, less hop-by-hop ones", () => {
    const raw = ['Content-Type', 'application/json', 'Content-Length', '10', 'Connection', 'close, X-Hop', 'X-Hop', '1', 'Keep-Alive', 'timeout=5', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'];
    expect(headersToClient(raw)).toEqual(['Content-Type', 'application/json', 'Content-Length', '10', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
  });
});

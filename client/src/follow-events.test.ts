// followEvents against a small Server-Sent Events server that keeps the contract of
// GET /api/events/stream (id: <cursor>, event: <eventType>, data: <envelope>, resumed with
// Last-Event-ID) and drops the connection when told to: reconnection resumes after the last event
// seen, error answers are thrown with the API's body, and stopping closes the connection.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createRlnCloudClient, RlnCloudError } from './client.ts';
import { followEvents, type FollowedEvent } from './follow-events.ts';

const NODE = 'ab'.repeat(16);
const envelope = (n: number) => ({
  eventId: `evt_${String(n).padStart(32, '0')}`,
  eventType: 'TEST',
  eventTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  nodeId: NODE,
  details: { nodeId: NODE, message: `event ${n}` },
});

interface FakeStream {
  baseUrl: string;
  /** Each request's Authorization and Last-Event-ID. */
  requests: { authorization?: string; lastEventId?: string; accept?: string }[];
  open: number;
  close(): Promise<void>;
}

/**
 * Events 1..total; each connection sends at most `perConnection` of them after Last-Event-ID and
 * then ends (or, with `hold`, stays open). `status` answers every request with that error instead.
 */
async function fakeStream(opts: { total: number; perConnection: number; hold?: boolean; status?: number }): Promise<FakeStream> {
  const fake: FakeStream = { baseUrl: '', requests: [], open: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    fake.requests.push({ authorization: req.headers.authorization, lastEventId: req.headers['last-event-id'] as string | undefined, accept: req.headers.accept });
    if (req.url !== '/api/events/stream') return res.writeHead(404).end();
    if (opts.status) {
      const body = { error: { code: opts.status === 401 ? 'unauthorized' : 'not_found', message: 'no', requestId: 'r1' } };
      return res.writeHead(opts.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
    fake.open++;
    res.on('close', () => fake.open--);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    let text = ': connected\nretry: 10\n\n';
    const after = Number(req.headers['last-event-id'] ?? 0);
    const last = Math.min(opts.total, after + opts.perConnection);
    for (let n = after + 1; n <= last; n++) text += `id: ${n}\nevent: TEST\ndata: ${JSON.stringify(envelope(n))}\n\n`;
    // Then the stream ends: cleanly on odd connections, on even ones the connection drops mid-way.
    const drop = fake.requests.length % 2 === 0;
    if (drop) text += 'id: 99\ndata: {"cut off';
    res.write(text, () => {
      if (opts.hold) return;
      if (drop) res.destroy();
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  fake.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return fake;
}

describe('followEvents', () => {
  let fake: FakeStream | undefined;
  afterEach(async () => {
    await fake?.close();
  });

  it('resumes after the last event with Last-Event-ID when the connection drops, missing and repeating nothing', async () => {
    fake = await fakeStream({ total: 7, perConnection: 2 });
    const client = createRlnCloudClient({ baseUrl: fake.baseUrl, token: 'tok' });
    const seen: FollowedEvent[] = [];
    for await (const followed of followEvents(client, { lastEventId: '1', signal: AbortSignal.timeout(10_000) })) {
      seen.push(followed);
      if (seen.length === 6) break;
    }
    expect(seen.map((s) => s.cursor)).toEqual(['2', '3', '4', '5', '6', '7']);
    expect(seen[0]!.event).toEqual(envelope(2));
    // Three connections: the first ended cleanly, the second dropped in the middle of an event.
    expect(fake.requests.map((r) => r.lastEventId)).toEqual(['1', '3', '5']);
    expect(fake.requests.every((r) => r.authorization === 'Bearer tok' && r.accept === 'text/event-stream')).toBe(true);
  });

  it('closes the connection when the loop stops, and ends quietly when the signal aborts', async () => {
    fake = await fakeStream({ total: 2, perConnection: 2, hold: true });
    const client = createRlnCloudClient({ baseUrl: fake.baseUrl, token: 'tok' });
    for await (const followed of followEvents(client)) {
      expect(followed.cursor).toBe('1');
      break;
    }
    await expect.poll(() => fake!.open).toBe(0);

    const stop = new AbortController();
    const seen: string[] = [];
    for await (const followed of followEvents(client, { signal: stop.signal })) {
      seen.push(followed.cursor);
      if (seen.length === 2) setTimeout(() => stop.abort(), 50); // abort while waiting for more
    }
    expect(seen).toEqual(['1', '2']);
    await expect.poll(() => fake!.open).toBe(0);
  });

  it('throws an error answer with the API error body instead of retrying it', async () => {
    fake = await fakeStream({ total: 0, perConnection: 0, status: 401 });
    const client = createRlnCloudClient({ baseUrl: fake.baseUrl, token: 'revoked' });
    const attempt = (async () => {
      for await (const _ of followEvents(client)) void _;
    })();
    await expect(attempt).rejects.toBeInstanceOf(RlnCloudError);
    await expect(attempt).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(fake.requests).toHaveLength(1);
  });
});

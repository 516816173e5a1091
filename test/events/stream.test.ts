// GET /api/events/stream over real HTTP: events committed after connecting arrive, a reconnect with
// Last-Event-ID (or ?after=) gets exactly what it missed, a client that does not read is cut off
// and forgotten, the caps answer clearly, an ended credential ends the stream, and a shutdown ends
// every stream at once.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants, type Tenants } from '../helpers/tenants.ts';
import { recordNodeEvent, recordNodeEvents } from '../../src/db/node-events.ts';
import { SseClient } from './sse-client.ts';

const HEARTBEAT_MS = 300;
const PER_USER = 4;
const MAX_STREAMS = 8;
const BUFFER_EVENTS = 32;

describe(`event stream (GET /api/events/stream) on ${databaseLabel()}`, () => {
  let t: TestServer;
  let users: Tenants;
  let nodeId: string;
  let secondNodeId: string;
  let bobNodeId: string;
  const open: SseClient[] = [];

  const stream = async (user: TestUser | undefined, query = '', headers: Record<string, string> = {}) => {
    const client = await SseClient.open(t.base, `/api/events/stream${query}`, { token: user?.token, headers });
    open.push(client);
    return client;
  };
  const streams = () => t.server.events.hub.streams;
  const untilStreams = async (n: number) => expect.poll(streams, { timeout: 10_000 }).toBe(n);
  const closeAll = async () => {
    for (const c of open.splice(0)) c.close();
    await untilStreams(0);
  };
  /** Test events recorded straight into the outbox, as any change records them. */
  const record = (owner: TestUser, node: string, count: number, details: Record<string, unknown> = {}) =>
    t.server.db.transaction((tx) =>
      recordNodeEvents(tx, Array.from({ length: count }, (_, i) => ({ node: { id: node, userId: owner.id }, eventType: 'TEST' as const, details: { n: i, ...details } }))),
    );
  const dataOf = (m: { data: string }) => JSON.parse(m.data);

  beforeAll(async () => {
    t = await startTestServer({
      EVENT_STREAM_HEARTBEAT: `${HEARTBEAT_MS}ms`,
      EVENT_STREAMS_PER_USER: String(PER_USER),
      EVENT_STREAMS_MAX: String(MAX_STREAMS),
      EVENT_STREAM_BUFFER_EVENTS: String(BUFFER_EVENTS),
      SHUTDOWN_TIMEOUT: '20s',
      // Long: every event here is committed in this process and must arrive without the poll.
      EVENT_STREAM_POLL: '10s',
    });
    users = await createTenants(t);
    [nodeId, secondNodeId] = await createNodes(t, users.alice, [{ name: 'streamed' }, { name: 'second' }]);
    [bobNodeId] = await createNodes(t, users.bob, [{ name: 'bobs' }]);
  }, 120_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.stop();
  });

  it('answers 401 without a valid token, before any stream opens', async () => {
    for (const token of [undefined, 'nope']) {
      const c = await stream(token === undefined ? undefined : { ...users.alice, token });
      expect(c.status).toBe(401);
      expect((await c.json()).error.code).toBe('unauthorized');
    }
    expect(streams()).toBe(0);
  });

  it('sends the events of every node of the caller committed after it connected, as text/event-stream, and none of others', async () => {
    const alice = await stream(users.alice);
    expect(alice.status).toBe(200);
    expect(alice.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(alice.res.headers['cache-control']).toBe('no-store');
    await record(users.bob, bobNodeId, 1);
    expect((await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: users.alice.token })).status).toBe(200);
    const stopping = await alice.next();
    expect(stopping.event).toBe('NODE_STATUS_UPDATED');
    expect(dataOf(stopping)).toMatchObject({ nodeId, eventType: 'NODE_STATUS_UPDATED', details: { nodeId, status: 'PAUSED', previousStatus: 'RUNNING' } });
    await record(users.alice, secondNodeId, 1, { which: 'second' });
    const second = await alice.next();
    expect(dataOf(second)).toMatchObject({ nodeId: secondNodeId, eventType: 'TEST', details: { which: 'second' } });
    // The message is the timeline's event, its id the cursor.
    const timeline = (await t.call(`/api/nodes/${nodeId}/events?order=newest&limit=1`, { token: users.alice.token })).json.events;
    expect(dataOf(stopping)).toEqual(timeline[0]);
    expect(stopping.id).toBe(timeline[0].cursor);
    expect(alice.retryMs).toBe(2000);
    await alice.comment(1, 5_000);
    expect(alice.unread()).toEqual([]);
    expect((await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: users.alice.token })).status).toBe(200);
    await t.waitForStatus(users.alice, nodeId, 'RUNNING');
    await closeAll();
  });

  it("follows only its nodes' events with a token limited to some nodes", async () => {
    const limited = await t.server.services.accounts.createToken(users.alice.email, 'only-second', undefined, { readOnly: true, nodeIds: [secondNodeId], access: 'all' });
    const client = await stream({ ...users.alice, token: limited.token });
    expect(client.status).toBe(200);
    await record(users.alice, nodeId, 2, { which: 'first' });
    await record(users.alice, secondNodeId, 1, { which: 'second' });
    const only = await client.next();
    expect(dataOf(only)).toMatchObject({ nodeId: secondNodeId, details: { which: 'second' } });
    expect(client.unread()).toEqual([]);
    await closeAll();
  });

  it('resumes with Last-Event-ID, or ?after=, with exactly the events missed, then live ones', async () => {
    const first = await stream(users.alice);
    await record(users.alice, nodeId, 1, { phase: 'seen' });
    const seen = await first.next();
    first.close();
    await untilStreams(0);

    const missed = await record(users.alice, nodeId, 3, { phase: 'missed' });
    await record(users.bob, bobNodeId, 2);
    const more = await record(users.alice, secondNodeId, 2, { phase: 'missed' });
    const expected = [...missed, ...more].map((e) => e.eventId);

    for (const resume of [{ headers: { 'last-event-id': seen.id! } }, { query: `?after=${seen.id}` }, { query: '?after=bogus', headers: { 'last-event-id': seen.id! } }]) {
      const again = await stream(users.alice, resume.query ?? '', resume.headers);
      expect(again.status).toBe(200);
      const got = await again.take(expected.length);
      expect(got.map((m) => dataOf(m).eventId)).toEqual(expected);
      const live = await record(users.alice, nodeId, 1, { phase: 'live' });
      expect(dataOf(await again.next()).eventId).toBe(live[0]!.eventId);
      // Nothing twice: a heartbeat later, nothing else has come.
      await again.comment(1);
      expect(again.unread()).toEqual([]);
      again.close();
      expected.push(live[0]!.eventId);
    }
    await closeAll();
  });

  it('refuses a forged Last-Event-ID or another user’s cursor with 400, and opens nothing', async () => {
    const bobs = (await t.call(`/api/nodes/${bobNodeId}/events`, { token: users.bob.token })).json.events[0].cursor;
    const forged = Buffer.from('event:1.99999999').toString('base64url');
    for (const [what, headers, query] of [
      ['garbage header', { 'last-event-id': 'garbage!' }, ''],
      ['forged header', { 'last-event-id': forged }, ''],
      ["bob's cursor", { 'last-event-id': bobs }, ''],
      ["bob's cursor as after", {}, `?after=${bobs}`],
      ['unknown parameter', {}, '?since=1'],
    ] as const) {
      const c = await stream(users.alice, query, headers);
      expect(c.status, what).toBe(400);
      expect((await c.json()).error.code, what).toBe('invalid_request');
    }
    expect(streams()).toBe(0);
  });

  it('delivers events in commit-safe order: one committed behind a later id waits for it, none is skipped', async () => {
    const client = await stream(users.alice);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slowId = '';
    // A transaction that records its event first and commits last.
    const slow = t.server.db.transaction(async (tx) => {
      slowId = (await recordNodeEvent(tx, { id: nodeId, userId: users.alice.id }, 'TEST', { which: 'slow' })).eventId;
      await gate;
    });
    if (t.server.db.kind === 'pglite') {
      // One session: transactions cannot overlap, so there is nothing to reorder.
      release();
      await slow;
      expect(dataOf(await client.next()).eventId).toBe(slowId);
      return closeAll();
    }
    let fast: Awaited<ReturnType<typeof record>>;
    try {
      await expect.poll(() => slowId).not.toBe('');
      fast = await record(users.alice, nodeId, 1, { which: 'fast' });
      // Committed, yet held back while an earlier transaction may still add events before it.
      await client.comment(2);
      expect(client.unread()).toEqual([]);
    } finally {
      release();
      await slow;
    }
    const got = await client.take(2);
    expect(got.map((m) => dataOf(m).eventId)).toEqual([slowId, fast[0]!.eventId]);
    await closeAll();
  });

  it('sends an event held back by a transaction that records none as soon as that one ends, not at the next poll', async () => {
    if (t.server.db.kind === 'pglite') return;
    const client = await stream(users.alice);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let began = false;
    // A write transaction (it holds a transaction id) that records no event and signals nothing.
    const unrelated = t.server.db.transaction(async (tx) => {
      await tx.query('UPDATE nodes SET updated_at = updated_at WHERE id = $1', [secondNodeId]);
      began = true;
      await gate;
    });
    let fast: Awaited<ReturnType<typeof record>>;
    try {
      await expect.poll(() => began).toBe(true);
      fast = await record(users.alice, nodeId, 1, { which: 'behind an unrelated transaction' });
      await client.comment(2);
      expect(client.unread()).toEqual([]);
    } finally {
      release();
      await unrelated;
    }
    const ended = Date.now();
    expect(dataOf(await client.next(5_000)).eventId).toBe(fast[0]!.eventId);
    // EVENT_STREAM_POLL is 10 s here.
    expect(Date.now() - ended).toBeLessThan(2_000);
    await closeAll();
  });

  it('disconnects a client that does not read once its buffer bound is passed, and forgets it', async () => {
    const reader = await stream(users.alice);
    const socket = await silentClient(t.base, users.alice.token);
    await untilStreams(2);
    const baseline = process.memoryUsage().rss;
    // Large events fill the socket buffers, then the stream's own bound (32 events) is passed.
    let batches = 0;
    while (streams() === 2 && batches < 1000) {
      await record(users.alice, nodeId, 10, { padding: 'x'.repeat(4096) });
      batches++;
      await new Promise((r) => setTimeout(r, 10));
    }
    await untilStreams(1);
    // The reading client got every event, the silent one was cut off: bounded, not buffered.
    const total = batches * 10;
    expect((await reader.take(total, 30_000)).length).toBe(total);
    expect(reader.isDone).toBe(false);
    expect(process.memoryUsage().rss - baseline).toBeLessThan(64 * 1024 * 1024);
    // The server closed the silent client's connection: reading now finds its end.
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    socket.destroy();
    await closeAll();
  }, 120_000);

  it('caps streams per user (429 rate_limited) and per process (503 service_unavailable)', async () => {
    const alice = await Promise.all(Array.from({ length: PER_USER }, () => stream(users.alice)));
    expect(alice.map((c) => c.status)).toEqual(Array(PER_USER).fill(200));
    const over = await stream(users.alice);
    expect(over.status).toBe(429);
    expect((await over.json()).error).toMatchObject({ code: 'rate_limited', details: { limit: PER_USER } });
    const bob = await Promise.all(Array.from({ length: MAX_STREAMS - PER_USER }, () => stream(users.bob)));
    expect(bob.map((c) => c.status)).toEqual(Array(MAX_STREAMS - PER_USER).fill(200));
    const carol = await t.createUser();
    const full = await stream(carol);
    expect(full.status).toBe(503);
    expect((await full.json()).error).toMatchObject({ code: 'service_unavailable', details: { limit: MAX_STREAMS } });
    expect(streams()).toBe(MAX_STREAMS);
    // A closed stream frees its place.
    alice[0]!.close();
    await untilStreams(MAX_STREAMS - 1);
    expect((await stream(carol)).status).toBe(200);
    await closeAll();
  });

  it('ends the stream once its token is revoked; the reconnect is refused', async () => {
    const dave = await t.createUser();
    const c = await stream(dave);
    expect(c.status).toBe(200);
    await t.server.services.accounts.revokeToken(dave.tokenId);
    // Checked every fourth heartbeat.
    await Promise.race([c.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('still streaming')), HEARTBEAT_MS * 12))]);
    await untilStreams(0);
    expect((await stream(dave)).status).toBe(401);
  });

  it('ends every stream at once on shutdown, without waiting for SHUTDOWN_TIMEOUT', async () => {
    const clients = [await stream(users.alice), await stream(users.bob)];
    const started = Date.now();
    await t.server.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    await Promise.all(clients.map((c) => c.ended));
    expect(streams()).toBe(0);
  });
});

/** A client that sends the request and then never reads a byte of the answer. */
function silentClient(base: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`GET /api/events/stream HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
      // Paused before the first byte arrives: the kernel buffers fill and the server sees backpressure.
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

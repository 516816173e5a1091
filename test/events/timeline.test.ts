// GET /api/nodes/{id}/events over real HTTP: a node's timeline after what its owner did, paging
// both ways, and every kind of bad input (limits, forged and foreign cursors, another user's node).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants, type Tenants } from '../helpers/tenants.ts';
import { recordNodeEvents } from '../../src/db/node-events.ts';

const PASSWORD = 'timeline wallet password';
const b64 = (text: string) => Buffer.from(text).toString('base64url');

describe(`node timeline (GET /api/nodes/{id}/events) on ${databaseLabel()}`, () => {
  let t: TestServer;
  let users: Tenants;
  let nodeId: string;
  let otherNodeId: string;
  let bobNodeId: string;

  const timeline = (id: string, query = '', token = users.alice.token) => t.call(`/api/nodes/${id}/events${query}`, { token });
  const types = (events: any[]) => events.map((e) => (e.eventType === 'NODE_STATUS_UPDATED' ? `STATUS ${e.details.status}` : e.eventType));
  /**
   * The timeline once `ready` holds: an event is listed once every transaction that began before it
   * has ended, on the whole PostgreSQL server (other test files' migrations, for one), so the last
   * one may take a moment to show.
   */
  const settled = async (id: string, ready: (events: any[]) => boolean, query = '', token = users.alice.token) => {
    let last: any;
    await expect.poll(async () => ready((last = (await timeline(id, query, token)).json).events), { timeout: 10_000 }).toBe(true);
    return last;
  };

  beforeAll(async () => {
    t = await startTestServer();
    users = await createTenants(t);
    [nodeId, otherNodeId] = await createNodes(t, users.alice, [{ name: 'followed' }, { name: 'neighbour' }]);
    [bobNodeId] = await createNodes(t, users.bob, [{ name: 'bobs' }]);
  }, 120_000);
  afterAll(() => t?.stop());

  it('lists what happened to the node in order: created, running, unlocked, paused', async () => {
    expect((await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: users.alice.token, body: { password: PASSWORD } })).status).toBe(200);
    const unlock = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: users.alice.token, body: { password: PASSWORD } });
    expect(unlock.status, unlock.text).toBe(200);
    expect((await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: users.alice.token })).status).toBe(200);
    await t.waitForStatus(users.alice, nodeId, 'PAUSED');

    const r = { json: await settled(nodeId, (events) => events.length >= 4) };
    expect(types(r.json.events)).toEqual(['STATUS STARTING', 'STATUS RUNNING', 'NODE_UNLOCKED', 'STATUS PAUSED']);
    const [created, running] = r.json.events;
    expect(created).toEqual({
      cursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      eventType: 'NODE_STATUS_UPDATED',
      eventTimestamp: expect.any(String),
      nodeId,
      details: { nodeId, status: 'STARTING', previousStatus: null },
    });
    expect(running.details).toEqual({ nodeId, status: 'RUNNING', previousStatus: 'STARTING' });
    expect(r.json.nextCursor).toBe(r.json.events.at(-1).cursor);
    // Nothing of the neighbour, which has its own timeline.
    expect((await timeline(otherNodeId)).json.events.every((e: any) => e.nodeId === otherNodeId)).toBe(true);
  });

  it('pages forward with nextCursor, and back from the newest with order=newest', async () => {
    const all = (await timeline(nodeId)).json.events;
    const forward: any[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await timeline(nodeId, `?limit=1${after ? `&after=${after}` : ''}`);
      expect(page.status, page.text).toBe(200);
      forward.push(...page.json.events);
      if (page.json.events.length < 1) {
        // Caught up: the cursor stays where it was, to follow with later.
        expect(page.json.nextCursor).toBe(after);
        break;
      }
      after = page.json.nextCursor;
    }
    expect(forward).toEqual(all);

    const first = await timeline(nodeId, '?order=newest&limit=3');
    expect(first.json.events).toEqual(all.slice(-3).reverse());
    const rest = await timeline(nodeId, `?order=newest&limit=3&after=${first.json.nextCursor}`);
    expect(rest.json.events).toEqual(all.slice(0, -3).reverse());
    // After the latest event, following finds nothing new until something happens.
    const latest = all.at(-1).cursor;
    const none = await timeline(nodeId, `?after=${latest}`);
    expect(none.json).toEqual({ events: [], nextCursor: latest });
    expect((await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: users.alice.token })).status).toBe(200);
    const next = await settled(nodeId, (events) => events.length > 0, `?after=${latest}`);
    expect(types(next.events)[0]).toBe('STATUS STARTING');
    await t.waitForStatus(users.alice, nodeId, 'RUNNING');
  });

  it('answers an empty timeline with a null cursor', async () => {
    await t.server.db.query('DELETE FROM node_events WHERE node_id = $1', [otherNodeId]);
    expect((await timeline(otherNodeId)).json).toEqual({ events: [], nextCursor: null });
  });

  it('refuses a limit out of 1-200, unknown parameters and orders with 400', async () => {
    for (const query of ['?limit=0', '?limit=201', '?limit=-1', '?limit=abc', '?limit=1.5', '?limit=', '?order=sideways', '?cursor=x', '?limit=1&limit=2']) {
      const r = await timeline(nodeId, query);
      expect(r.status, query).toBe(400);
      expect(r.json.error.code, query).toBe('invalid_request');
    }
    expect((await timeline(nodeId, '?limit=200')).status).toBe(200);
  });

  it('refuses forged cursors and cursors of other users or other nodes with 400', async () => {
    const mine = (await timeline(nodeId)).json.events[0].cursor as string;
    const decoded = Buffer.from(mine, 'base64url').toString();
    const [tx, id] = decoded.slice('event:'.length).split('.');
    const bobs = (await timeline(bobNodeId, '', users.bob.token)).json.events[0].cursor as string;
    const neighbours = await t.server.db.transaction((tx) =>
      recordNodeEvents(tx, [{ node: { id: otherNodeId, userId: users.alice.id }, eventType: 'TEST', details: { message: 'x' } }]),
    );
    const isNeighbours = (e: any) => e.eventId === neighbours[0]!.eventId;
    const neighbour = (await settled(otherNodeId, (events) => events.some(isNeighbours))).events.find(isNeighbours).cursor;
    const cases: Record<string, string> = {
      'not base64url': 'not a cursor!',
      'another kind': b64(`node:${tx}.${id}`),
      'no such event': b64(`event:${tx}.${Number(id) + 1_000_000}`),
      'another transaction': b64(`event:${BigInt(tx!) + 1n}.${id}`),
      'padded': `${mine}==`,
      'too long': 'A'.repeat(129),
      "bob's event": bobs,
      "the neighbour's event": neighbour,
    };
    for (const [what, after] of Object.entries(cases)) {
      const r = await timeline(nodeId, `?after=${encodeURIComponent(after)}`);
      expect(r.status, what).toBe(400);
      expect(r.json.error.code, what).toBe('invalid_request');
      expect(r.json.error.message, what).toMatch(/^after /);
    }
  });

  it("answers another user's node like a missing one: 404 node_not_found", async () => {
    const foreign = await timeline(nodeId, '', users.bob.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('node_not_found');
    // Even with the owner's own cursor: the node is checked first.
    const cursor = (await timeline(nodeId)).json.events[0].cursor;
    expect((await timeline(nodeId, `?after=${cursor}`, users.bob.token)).status).toBe(404);
  });

  it('documents the timeline and the stream (as text/event-stream) in the OpenAPI document', async () => {
    const { paths, components } = (await t.call('/api/openapi.json')).json;
    const timelineAnswer = paths['/api/nodes/{id}/events'].get.responses['200'].content['application/json'].schema;
    expect(timelineAnswer.properties.events.items.$ref).toBe('#/components/schemas/NodeEvent');
    expect(Object.keys(components.schemas.NodeEvent.properties)).toEqual(['cursor', 'eventId', 'eventType', 'eventTimestamp', 'nodeId', 'details']);
    const stream = paths['/api/events/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(stream.responses)).toEqual(expect.arrayContaining(['400', '401', '429', '503']));
    expect(paths['/api/events/stream'].head).toBeUndefined();
  });

  it('keeps the events of a destroyed node readable', async () => {
    const before = (await timeline(nodeId)).json.events.length;
    expect((await t.call('/api/nodes', { method: 'DELETE', token: users.alice.token, body: { destroyNodeId: nodeId } })).status).toBe(200);
    await t.waitForStatus(users.alice, nodeId, 'DESTROYED');
    const after = (await settled(nodeId, (events) => events.at(-1)?.details.status === 'DESTROYED')).events;
    expect(after.length).toBeGreaterThan(before);
    expect(types(after).slice(-2)).toEqual(['STATUS DESTROYING', 'STATUS DESTROYED']);
  });
});

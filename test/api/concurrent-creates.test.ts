// Fifty creations at once: each gets its own pair of daemon ports, and none answers 500. On
// PostgreSQL the creations' transactions really run side by side (on PGlite they take turns), so
// without the port allocation lock two of them would pick the same pair and hit the unique index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { randomNodePortRange } from '../helpers/ports.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

const NODES = 50;

describe(`${NODES} node creations at once on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    // One build at a time: the point is the creations, not 50 daemons starting together. Room for
    // twice the pairs needed: another test file's server may draw an overlapping range and hold a
    // few of its ports (seen in CI: 49 of 50 got ports, the last answered no_ports_available).
    t = await startTestServer({ JOB_CONCURRENCY: '1', SHUTDOWN_TIMEOUT: '1s', NODE_PORT_RANGE: randomNodePortRange(4 * NODES) });
    alice = await t.createUser();
  });
  afterAll(() => t?.stop());

  it('gives every node its own ports', async () => {
    const answers = await Promise.all(
      Array.from({ length: NODES }, (_, i) => t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: `n${i}`, network: 'regtest' } })),
    );
    expect(answers.filter((a) => a.status !== 200).map((a) => a.text)).toEqual([]);
    const rows = await t.server.db.query<{ rest_port: number; peer_port: number }>('SELECT rest_port, peer_port FROM nodes WHERE user_id = $1', [alice.id]);
    const ports = rows.flatMap((r) => [r.rest_port, r.peer_port]);
    expect(ports).toHaveLength(2 * NODES);
    expect(new Set(ports).size).toBe(2 * NODES);
  }, 60_000);
});

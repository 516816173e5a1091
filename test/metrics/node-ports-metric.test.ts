// rlncloud_node_ports on Kubernetes' NodePort mode: the cluster allocates a node port to each
// node's peer Service, so every node not destroyed holds one of K8S_NODE_PORT_RANGE (HostPort's
// K8S_PEER_PORT_RANGE is counted from the ports the service hands out: test/deploy/peer-host-ports.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';
import { createLogger } from '../../src/logger.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`the peer-port metric in NodePort mode, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'np', 'np@example.com', 'scale');
    await insertRelease(db, 'v1');
    for (const [id, status] of [['np-1', 'RUNNING'], ['np-2', 'PAUSED'], ['np-3', 'FAILED'], ['np-4', 'DESTROYED']] as const) {
      await db.query(`INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, destroyed_at)
                      VALUES ($1, 'np', $1, 'regtest', $2, 'running', 'v1', ${status === 'DESTROYED' ? 'now()' : 'NULL'})`, [id, status]);
    }
  });
  afterAll(async () => close?.());

  it('counts a node port per node not destroyed, against the range', async () => {
    const metrics = new ServiceMetrics(db, createLogger('silent'), { kubernetes: true, nodePortRange: { from: 30000, to: 30009, countNodes: true } });
    const text = await metrics.registry.metrics();
    expect(text).toContain('rlncloud_node_ports{state="used"} 3\n');
    expect(text).toContain('rlncloud_node_ports{state="free"} 7\n');
  });
});

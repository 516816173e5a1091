// The cast most API suites need for their security cases: alice (who owns the nodes under test),
// bob (another user, who must never reach them) and a user whose only token is revoked.
import type { Plan } from '../../src/domain/plans.ts';
import type { TestServer, TestUser } from './server.ts';

export interface Tenants {
  alice: TestUser;
  bob: TestUser;
  /** A user whose token was revoked: every bearer route must answer it 401. */
  revoked: TestUser;
}

export async function createTenants(t: TestServer, plans: { alice?: Plan; bob?: Plan } = {}): Promise<Tenants> {
  const alice = await t.createUser(plans.alice);
  const bob = await t.createUser(plans.bob);
  const revoked = await t.createUser();
  await t.server.services.accounts.revokeToken(revoked.tokenId);
  return { alice, bob, revoked };
}

export interface NewNode {
  name: string;
  network?: 'regtest' | 'testnet';
  settings?: { webhookUrl?: string; continuousState?: boolean };
}

/**
 * Creates `owner`'s nodes through the API, in order, and answers their ids. With `untilRunning`
 * (the default) it returns once every one of them is RUNNING.
 */
export async function createNodes<const Nodes extends readonly NewNode[]>(
  t: TestServer,
  owner: TestUser,
  nodes: Nodes,
  { untilRunning = true } = {},
): Promise<{ [K in keyof Nodes]: string }> {
  const ids: string[] = [];
  for (const { network = 'regtest', ...rest } of nodes) {
    const r = await t.call('/api/nodes', { method: 'POST', token: owner.token, body: { ...rest, network } });
    if (r.status !== 200) throw new Error(`creating node ${rest.name} answered ${r.status}: ${r.text}`);
    ids.push(r.json.data.nodeId);
  }
  if (untilRunning) await Promise.all(ids.map((id) => t.waitForStatus(owner, id, 'RUNNING')));
  return ids as { [K in keyof Nodes]: string };
}

// What the backup suites share: a node with a wallet, a backup waited for, a file downloaded.
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { TestServer, TestUser } from '../helpers/server.ts';

export const PASSWORD = 'backup-password-1';

/** Initialises the node's wallet through the API; answers the mnemonic. */
export async function initWallet(t: TestServer, user: TestUser, nodeId: string, password = PASSWORD): Promise<string> {
  const r = await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: user.token, body: { password } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.mnemonic;
}

export async function unlock(t: TestServer, user: TestUser, nodeId: string, password = PASSWORD) {
  const r = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: user.token, body: { password } });
  expect(r.status, r.text).toBe(200);
}

export const startBackup = (t: TestServer, user: TestUser, nodeId: string, password = PASSWORD) =>
  t.call(`/api/nodes/${nodeId}/backups`, { method: 'POST', token: user.token, body: { password } });

/** Polls a backup until it has finished; answers its last GET. */
export async function waitForBackup(t: TestServer, user: TestUser, nodeId: string, backupId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.call(`/api/nodes/${nodeId}/backups/${backupId}`, { token: user.token });
    expect(r.status, r.text).toBe(200);
    if (r.json.status !== 'IN_PROGRESS') return r.json;
    if (Date.now() > deadline) throw new Error(`backup ${backupId} still IN_PROGRESS after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Starts a backup and waits for it. */
export async function backUp(t: TestServer, user: TestUser, nodeId: string, password = PASSWORD) {
  const r = await startBackup(t, user, nodeId, password);
  expect(r.status, r.text).toBe(202);
  return waitForBackup(t, user, nodeId, r.json.backupId);
}

export async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function nodeRecord(t: TestServer, user: TestUser, nodeId: string) {
  return (await t.call(`/api/nodes/${nodeId}`, { token: user.token })).json.data;
}

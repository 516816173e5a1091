// End to end, as a newcomer would: `npm start` in a fresh DATA_DIR, the CLI creating a user and a
// token while the server runs, and a node walked from create to RUNNING to DESTROYED. Then a crash:
// the server killed with SIGKILL during a create build, restarted, and the node still reaching RUNNING.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { callService as api, serviceEnv, startServiceProcess, waitForServiceNode as waitForStatus, type ServiceProcess } from '../helpers/service-process.ts';

describe('the service started with npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-e2e-'));
  const running: ServiceProcess[] = [];
  afterAll(async () => {
    for (const svc of running) await svc.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a development token on first start and keeps it in a 0600 file', async () => {
    const svc = await startServiceProcess(await serviceEnv(dataDir));
    running.push(svc);
    const token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    expect(statSync(join(dataDir, 'dev-token')).mode & 0o777).toBe(0o600);
    await svc.waitForOutput(/with the password \S+\n/);
    expect(svc.output()).toContain(token);
    expect((await api(svc, token, '/api/nodes')).json).toEqual({ nodes: [] });
    // ... and a password for the web UI, which signs in.
    const password = /sign in as dev@localhost with the password (\S+)/.exec(svc.output())?.[1];
    expect(password, svc.output()).toBeDefined();
    const signIn = await fetch(`${svc.base}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dev@localhost', password }),
    });
    expect(signIn.status).toBe(200);
  });

  it('logs JSON lines when its output is not a terminal (readable lines on one: src/pretty-log.test.ts)', () => {
    const svc = running[0]!;
    // Started with its output on a pipe: JSON lines.
    expect(svc.output()).toMatch(/^\{"level":30,.*"msg":"rln-cloud is ready at /m);
  });

  it('walks a node from create to RUNNING to DESTROYED with a token the CLI made while the server runs', async () => {
    const svc = running[0]!;
    const user = svc.cli(['user', 'create', 'carol@example.com', '--plan', 'wallet']);
    expect(user).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), email: 'carol@example.com', plan: 'wallet', accountId: user.id, createdAt: expect.any(String) });
    const { token, id: tokenId } = svc.cli(['token', 'create', 'carol@example.com', '--name', 'e2e']);
    expect(token).toMatch(/^rlnc_/);

    const created = await api(svc, token, '/api/nodes', { method: 'POST', body: { name: 'e2e', network: 'testnet' } });
    expect(created.json.data.status).toBe('STARTING');
    const nodeId = created.json.data.nodeId;
    await waitForStatus(svc, token, nodeId, 'RUNNING');

    // The operator's CLI saves a client certificate as files; curl opens the node with them.
    const dir = join(dataDir, 'carol-creds');
    const saved = svc.cli(['cert', 'issue', nodeId, '--dir', dir]);
    expect(saved).toMatchObject({ serial: expect.stringMatching(/^[0-9a-f]+$/), nodeUrl: expect.stringContaining(`/nodes/${user.id}/${nodeId}/`) });
    expect(statSync(saved.files.key).mode & 0o777).toBe(0o600);
    const [command, ...args] = saved.try.split(' ');
    const curl = spawnSync(command, ['-sS', ...args], { encoding: 'utf8' });
    expect(JSON.parse(curl.stdout), curl.stderr).toMatchObject({ code: 403, error: expect.stringContaining('locked') });
    // Never over existing files.
    expect(svc.cli(['cert', 'issue', nodeId, '--dir', dir]).error.message).toMatch(/exists already/);

    expect((await api(svc, token, '/api/nodes', { method: 'DELETE', body: { destroyNodeId: nodeId } })).status).toBe(200);
    const destroyed = await waitForStatus(svc, token, nodeId, 'DESTROYED');
    expect(destroyed.builds.map((b: any) => b.buildStatus)).toEqual(['SUCCESS', 'SUCCESS']);

    expect(svc.cli(['token', 'revoke', tokenId])).toMatchObject({ id: tokenId });
    expect((await api(svc, token, '/api/nodes')).status).toBe(401);
    expect(svc.cli(['user', 'create', 'carol@example.com'])).toEqual({ error: { code: 'user_exists', message: expect.any(String) } });
  });

  it('finishes a create build interrupted by SIGKILL after a restart', async () => {
    const svc = running.pop()!;
    const token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    const created = await api(svc, token, '/api/nodes', { method: 'POST', body: { name: 'crash', network: 'regtest' } });
    const nodeId = created.json.data.nodeId;
    process.kill(svc.serverPid(), 'SIGKILL');
    await svc.stop('SIGKILL');

    const again = await startServiceProcess(svc.env);
    running.push(again);
    const node = await waitForStatus(again, token, nodeId, 'RUNNING');
    expect(node.builds).toEqual([expect.objectContaining({ buildNumber: 1, buildStatus: 'SUCCESS', action: 'create' })]);
    // The banner would be written right after the ready line.
    await again.waitForOutput(/rln-cloud is ready at /);
    expect(again.output()).not.toContain('First start');
  });
});

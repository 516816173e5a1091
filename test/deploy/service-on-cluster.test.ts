// The service itself deployed on the test cluster from deploy/kubernetes (overlay test-cluster), as
// an operator would: its image built without Docker and imported, a fresh PostgreSQL database,
// Secrets mounted as files, two replicas behind NodePort Services, RUNTIME=kubernetes with the
// pod's own service account. Then, from the host: users made with the operator CLI (in a replica
// and on the host), a node created and RUNNING as a pod of the cluster, reached through the bearer
// and the mutual-TLS gateway, its output exported to the S3 bucket, destroyed; everything torn
// down at the end (the namespaces, and with them the node pods).
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOnCluster, kubectl } from '../helpers/kubernetes.ts';
import {
  deployService,
  explained,
  NODES_NAMESPACE,
  SERVICE_IMAGE,
  SERVICE_NAMESPACE,
  servicePods,
  killPod,
  NODE_ADDRESS,
  poll,
  URLS,
  waitForReadyReplicas,
  type DeployedService,
  type DeployedUser,
} from '../helpers/deployed-service.ts';
import { tlsRequest, type ClientCredentials } from '../gateway/gateway-client.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import pg from 'pg';

/** A GET on a connection of its own: answers the status, or the connection error's code. */
function freshGet(url: string, token: string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(`error: ${err.code ?? err.message}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`error: ${err.code ?? err.message}`));
  });
}

/** The service pods' own addresses (the host reaches pod IPs through the cluster's bridge). */
async function podAddresses(): Promise<string[]> {
  const list = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'pods', '-l', 'app.kubernetes.io/name=rln-cloud', '-o', 'json']));
  return list.items.filter((p: any) => !p.metadata.deletionTimestamp && p.status.podIP).map((p: any) => p.status.podIP as string);
}

const PASSWORD = 'node-password-123';
const SERVICE_ACCOUNT = `system:serviceaccount:${SERVICE_NAMESPACE}:rln-cloud`;
const pem = (text: string) => text.replace(/\s+/g, '');

// Once per CI run, in its PostgreSQL pass (the deployed replicas use the machine's PostgreSQL
// either way; the PGlite pass would only repeat it).
const describeDeployed = process.env.TEST_DATABASE_URL ? describeOnCluster : describe.skip;

describeDeployed('the service deployed on the test cluster (deploy/kubernetes)', () => {
  let svc: DeployedService;
  let alice: DeployedUser;
  let nodeId: string;
  let cert: ClientCredentials;

  beforeAll(async () => {
    svc = await deployService({ replicas: 2 });
  }, 900_000);
  afterAll(async () => {
    await svc?.teardown();
    if (svc) console.info(`deployment steps (s): ${JSON.stringify(svc.timings)}`);
  }, 600_000);

  it('runs two ready replicas of the image as a non-root user on a read-only root, with the Secrets as files', async () => {
    const pods = await servicePods();
    expect(pods.filter((p) => p.ready && !p.deleting)).toHaveLength(2);
    const pod = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'pod', pods[0]!.name, '-o', 'json']));
    expect(pod.spec.containers[0]).toMatchObject({ image: SERVICE_IMAGE, imagePullPolicy: 'Never' });
    expect(pod.spec.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.spec.serviceAccountName).toBe('rln-cloud');

    // Inside a replica: uid 1000, the Secret files readable (by group 1000, nobody else), / read-only.
    const probe = `const fs = require('fs');
      const mode = (p) => (fs.statSync(p).mode & 0o777).toString(8);
      let rootWritable = true; try { fs.writeFileSync('/app/x', ''); } catch { rootWritable = false; }
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), rootWritable,
        key: mode('/etc/rln-cloud/ca/ca.key'), url: fs.readFileSync('/etc/rln-cloud/database/url', 'utf8').startsWith('postgres://'),
        token: fs.existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token') }));`;
    const inside = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'exec', pods[0]!.name, '--', 'node', '-e', probe]));
    expect(inside).toEqual({ uid: 1000, gid: 1000, rootWritable: false, key: '440', url: true, token: true });
  }, 120_000);

  it('gives the service account exactly the rights its runtime uses, in the nodes namespace only', async () => {
    const can = async (verb: string, resource: string, namespace = NODES_NAMESPACE) => {
      const [kind, subresource] = resource.split('/');
      const args = ['auth', 'can-i', verb, kind!, ...(subresource ? [`--subresource=${subresource}`] : []), '-n', namespace, `--as=${SERVICE_ACCOUNT}`];
      return (await kubectl(args).catch(() => 'no')).trim();
    };
    for (const [verb, resource] of [
      ['watch', 'statefulsets.apps'], ['patch', 'statefulsets.apps'], ['create', 'services'], ['delete', 'pods'],
      ['get', 'pods/log'], ['get', 'pods/exec'], ['create', 'pods/exec'], ['delete', 'persistentvolumeclaims'],
      // A node's VSS URL Secret: applied and deleted, never read back (get secrets stays refused below).
      ['patch', 'secrets'], ['delete', 'secrets'],
    ]) expect(`${verb} ${resource}: ${await can(verb!, resource!)}`).toBe(`${verb} ${resource}: yes`);
    for (const [verb, resource, namespace] of [
      ['create', 'pods'], ['get', 'secrets'], ['create', 'persistentvolumeclaims'], ['list', 'pods', SERVICE_NAMESPACE], ['list', 'statefulsets.apps', 'default'],
      ['create', 'pods/exec', SERVICE_NAMESPACE],
    ]) expect(`${verb} ${resource} in ${namespace ?? NODES_NAMESPACE}: ${await can(verb!, resource!, namespace)}`).toBe(`${verb} ${resource} in ${namespace ?? NODES_NAMESPACE}: no`);
    // The start-up namespace check needed no more than that: no replica logged a refusal.
    for (const pod of await servicePods()) {
      const logs = await kubectl(['-n', SERVICE_NAMESPACE, 'logs', pod.name]);
      expect(logs).not.toMatch(/forbidden|does not allow|could not check the nodes namespace/i);
    }
  }, 120_000);

  it('takes users from the operator CLI, in a replica and on the host, and signs with the keyring from its Secret', async () => {
    alice = await svc.createUser();
    expect((await svc.api('/api/nodes', { token: alice.token })).json).toEqual({ nodes: [] });
    expect((await svc.api('/api/nodes')).status).toBe(401);
    const key = await svc.api('/api/webhook-public-key', { token: alice.token });
    expect(key.status, key.text).toBe(200);
    expect(pem(key.json.data)).toBe(pem(svc.secrets.webhookPublicKeyPem));
    const keys = await svc.api('/api/webhook-public-keys', { token: alice.token });
    expect(keys.status, keys.text).toBe(200);
    const current = (keys.json.data as Array<{ scheme: string; publicKey: string; current: boolean }>).find((k) => k.scheme === 'standard-webhooks-v1a' && k.current);
    expect(pem(current!.publicKey)).toBe(pem(svc.secrets.standardWebhooksPublicKeyPem));
  }, 120_000);

  it('runs a node as a pod of the cluster and reaches it through both gateways', async () => {
    const created = await svc.api('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'deployed', network: 'regtest' } });
    expect(created.status, created.text).toBe(200);
    nodeId = created.json.data.nodeId;
    const running = await svc.waitForNode(alice, nodeId, 'RUNNING');
    expect(running).toMatchObject({ locked: true, rln_commit_id: 'devnode-0.1.0', peerDNS: '198.18.1.1' });
    const pod = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'pod', `rln-${nodeId}-0`, '-o', 'json']));
    expect(pod.spec.containers[0].image).toBe('localhost/devnode:devnode-0.1.0');

    await explained('calling the node through the bearer gateway', async () => {
      expect((await svc.bearer(alice, nodeId, '/nodeinfo')).status).toBe(403); // a fresh RLN is locked
      const init = await svc.bearer(alice, nodeId, '/init', { method: 'POST', body: { password: PASSWORD } });
      expect(init.status, init.text).toBe(200);
      const unlock = await svc.bearer(alice, nodeId, '/unlock', { method: 'POST', body: { password: PASSWORD } });
      expect(unlock.status, unlock.text).toBe(200);
    });
    const info = await svc.bearer(alice, nodeId, '/nodeinfo');
    expect(info.status, info.text).toBe(200);
    // Continuous state (devnode releases have it): the pod reached the service's VSS at VSS_NODE_URL
    // (the API's NodePort on the node address: the test cluster has no DNS for the base's in-cluster
    // name; through the NetworkPolicies) when it took its fence at unlock, and
    // its URL is in the node's Secret, not in its StatefulSet.
    const state = await svc.api(`/api/nodes/${nodeId}/continuous-state`, { token: alice.token });
    expect(state.status, state.text).toBe(200);
    expect(state.json.data).toMatchObject({ enabled: true, store: { bound: true, keys: 1 }, daemon: { checked: true, pendingWrites: 0 } });
    const set = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'statefulset', `rln-${nodeId}`, '-o', 'json']));
    expect(set.spec.template.spec.containers[0].args.slice(-3)).toEqual(['--vss-url', '$(RLN_VSS_URL)', '--vss-allow-http']);
    expect(JSON.stringify(set)).not.toContain('/vss/');
    const secret = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'secret', `rln-${nodeId}-vss`, '-o', 'json']));
    expect(Buffer.from(secret.data.url, 'base64').toString()).toMatch(new RegExp(`^http://198\\.18\\.1\\.1:32080/vss/${nodeId}/`));

    const issued = await svc.api(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(issued.status, issued.text).toBe(200);
    cert = issued.json;
    // issued by the CA from the Secret, which every replica shares
    expect(pem(cert.certificateChain)).toContain(pem(svc.secrets.caCertificatePem));
    // Several calls: the NodePort spreads connections over both replicas, each with its own
    // gateway certificate from the shared CA.
    for (let i = 0; i < 6; i++) {
      const viaMtls = await explained('calling the node through the mutual-TLS gateway', () => svc.mtls(alice, nodeId, '/nodeinfo', cert));
      expect(viaMtls.status, viaMtls.text).toBe(200);
      expect(viaMtls.json.pubkey).toBe(info.json.pubkey);
    }
    expect((await svc.api(`/api/nodes/${nodeId}`, { token: alice.token })).json.data).toMatchObject({ locked: false, initialized: true });
  }, 400_000);

  it("exports the node's output to the S3 bucket", async () => {
    const started = await svc.api(`/api/nodes/${nodeId}/logs`, { method: 'POST', token: alice.token });
    expect(started.status, started.text).toBeLessThan(300);
    let result = await svc.api(`/api/nodes/${nodeId}/logs?taskId=${started.json.taskId}`, { token: alice.token });
    for (const deadline = Date.now() + 120_000; result.status === 202 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 1_000));
      result = await svc.api(`/api/nodes/${nodeId}/logs?taskId=${started.json.taskId}`, { token: alice.token });
    }
    expect(result.json, result.text).toMatchObject({ status: 'SUCCEEDED' });
    const urls: string[] = result.json.data;
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.every((u) => u.startsWith('http://198.18.1.1:29000/'))).toBe(true);
    const text = (await Promise.all(urls.map(async (u) => gunzipSync(Buffer.from(await (await fetch(u)).arrayBuffer())).toString('utf8')))).join('');
    expect(text).toMatch(/devnode/i);
  }, 200_000);

  it('refuses a token revoked through the API on every replica within a second', async () => {
    const made = await svc.api('/api/tokens', { method: 'POST', token: alice.token, body: { name: 'revoked-soon' } });
    expect(made.status, made.text).toBe(200);
    const revoked = { ...alice, token: made.json.data.token as string };
    expect((await svc.bearer(revoked, nodeId, '/nodeinfo')).status).toBe(200);
    expect((await svc.api(`/api/tokens/${made.json.data.id}`, { method: 'DELETE', token: alice.token })).status).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 1_000));
    // Each replica's own listeners (pod addresses), not whichever one the NodePort picks.
    const pods = await podAddresses();
    expect(pods).toHaveLength(2);
    for (const ip of pods) {
      const api = await fetch(`http://${ip}:8080/api/nodes`, { headers: { authorization: `Bearer ${revoked.token}` } });
      const gateway = await fetch(`http://${ip}:8081/${alice.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${revoked.token}` } });
      expect([ip, api.status, gateway.status]).toEqual([ip, 401, 401]);
      const valid = await fetch(`http://${ip}:8081/${alice.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${alice.token}` } });
      expect([ip, valid.status]).toEqual([ip, 200]);
    }
  }, 120_000);

  it('believes a forwarded client address from the proxy TRUSTED_PROXIES names on every replica, never from a pod', async () => {
    const pods = await podAddresses();
    expect(pods).toHaveLength(2);
    /** The source address recorded for the certificate issued by the call `issue` makes. */
    const recorded = async (issue: () => Promise<unknown>) => {
      const before = (await svc.api('/api/audit-events?limit=1', { token: alice.token })).json.events[0]?.id ?? '0';
      await issue();
      return poll('the certificate.issued audit event', async () => {
        const events: any[] = (await svc.api('/api/audit-events?limit=20', { token: alice.token })).json.events;
        return events.find((e) => BigInt(e.id) > BigInt(before) && e.action === 'certificate.issued')?.sourceIp;
      }, 30_000, undefined, 250);
    };
    const issuePath = `/api/nodes/${nodeId}/generate-cert`;
    // This machine reaches each replica's pod from cni0 (198.18.0.1): the trusted proxy.
    for (const ip of pods) {
      const claimed = `203.0.113.${pods.indexOf(ip) + 10}`;
      const sourceIp = await recorded(async () => {
        const r = await fetch(`http://${ip}:8080${issuePath}`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}`, 'x-forwarded-for': claimed } });
        expect([ip, r.status]).toEqual([ip, 200]);
      });
      expect([ip, sourceIp]).toEqual([ip, claimed]);
    }
    // A node's pod is any other peer inside the cluster: what it claims is not believed.
    const nodePod = `rln-${nodeId}-0`;
    const podIp = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'pod', nodePod, '-o', 'json'])).status.podIP as string;
    const script = `fetch(${JSON.stringify(`http://${pods[0]}:8080${issuePath}`)},{method:'POST',headers:{authorization:${JSON.stringify(`Bearer ${alice.token}`)},'x-forwarded-for':'203.0.113.99'}}).then((r)=>console.log(r.status))`;
    const sourceIp = await recorded(async () => {
      const out = await kubectl(['-n', NODES_NAMESPACE, 'exec', nodePod, '--', '/usr/bin/node', '-e', script]);
      expect(out.trim()).toBe('200');
    });
    expect(sourceIp).toBe(podIp);
  }, 120_000);

  it("applies a demoted member's current role to their client certificate on every replica within a second", async () => {
    // Starter has one seat, the owner's: a plan with members.
    await svc.hostCli(['account', 'set-plan', alice.email, 'scale']);
    const invited = await svc.api('/api/account/invitations', { method: 'POST', token: alice.token, body: { email: `dev-${Date.now()}@example.com`, role: 'developer' } });
    expect(invited.status, invited.text).toBe(201);
    const joined = await svc.api('/api/account/invitations/accept', { method: 'POST', body: { token: invited.json.invitationUrl.split('#token=')[1], password: 'developer-password-1' } });
    expect(joined.status, joined.text).toBe(201);
    const member: DeployedUser = { id: alice.id, email: joined.json.email, token: '' };
    // The member's own token, minted by the operator on the host (a member signs in to the web UI otherwise).
    member.token = (await svc.hostCli(['token', 'create', joined.json.email, '--name', 'developer'])).token;
    const issued = await svc.api(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: member.token });
    expect(issued.status, issued.text).toBe(200);
    const memberCert: ClientCredentials = issued.json;
    expect((await svc.api(`/api/account/members/${joined.json.userId}`, { method: 'PATCH', token: alice.token, body: { role: 'viewer' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_000));
    // Several calls: the NodePort spreads connections over both replicas.
    for (let i = 0; i < 6; i++) {
      const lock = await tlsRequest(URLS.mtls, `/nodes/${alice.id}/${nodeId}/lock`, { ...memberCert, ca: memberCert.certificateChain }, { method: 'POST' });
      expect([i, lock.status, lock.json?.rln_cloud?.code]).toEqual([i, 403, 'forbidden_scope']);
      expect((await svc.mtls(member, nodeId, '/nodeinfo', memberCert)).status).toBe(200);
    }
  }, 120_000);

  it('loses nothing when the replica leading a rollout is killed: each node upgraded once, every webhook event delivered', async () => {
    const receiver = await startReceiver(0, NODE_ADDRESS);
    const db = new pg.Client({ connectionString: svc.database.hostUrl });
    await db.connect();
    try {
      const bob = await svc.createUser('scale');
      const ids: string[] = [];
      for (const name of ['r1', 'r2']) {
        const created = await svc.api('/api/nodes', { method: 'POST', token: bob.token, body: { name, network: 'regtest', settings: { webhookUrl: receiver.url } } });
        expect(created.status, created.text).toBe(200);
        ids.push(created.json.data.nodeId);
      }
      for (const id of ids) await svc.waitForNode(bob, id, 'RUNNING');
      const published = await svc.hostCli(['release', 'publish', 'devnode-0.2.0', '--concurrency', '1']);
      expect(published.error, JSON.stringify(published)).toBeUndefined();
      await poll('an upgrade under way', async () => {
        for (const id of ids) if ((await svc.api(`/api/nodes/${id}`, { token: bob.token })).json.data.status === 'IN_PROGRESS') return true;
        return false;
      }, 120_000);
      // The reconcile lease's holder is named after its pod (its hostname): kill that one, at once.
      const holder = (await db.query<{ holder: string }>(`SELECT holder FROM leases WHERE name = 'reconciler'`)).rows[0]?.holder;
      const victim = (await servicePods()).find((p) => holder?.startsWith(`${p.name}/`));
      expect(victim, `lease holder ${holder}`).toBeDefined();
      await killPod(victim!.name, { force: true });
      for (const id of ids) {
        await explained(`node ${id} upgraded after the kill`, () =>
          poll(`node ${id} on devnode-0.2.0`, async () => {
            // A killed pod is a crash, not a drain: until the Service drops it, a connection may
            // land on it and fail. A client retries; so does this one.
            const n = await svc.api(`/api/nodes/${id}`, { token: bob.token }).then((r) => r.json?.data, () => undefined);
            return n?.status === 'RUNNING' && n.rln_commit_id === 'devnode-0.2.0';
          }, 300_000),
        );
      }
      const upgrades = await db.query<{ node_id: string; n: number }>(`SELECT node_id, count(*)::int AS n FROM builds WHERE action = 'upgrade' AND node_id = ANY($1) GROUP BY node_id`, [ids]);
      expect(upgrades.rows.map((r) => [r.node_id, r.n]).sort()).toEqual([...ids].sort().map((id) => [id, 1]));
      const numbers = await db.query<{ node_id: string; numbers: number[] }>(`SELECT node_id, array_agg(build_number ORDER BY build_number) AS numbers FROM builds WHERE node_id = ANY($1) GROUP BY node_id`, [ids]);
      for (const row of numbers.rows) expect(row.numbers, row.node_id).toEqual(row.numbers.map((_, i) => i + 1));
      // Every event recorded for the nodes reached the receiver, under its one webhook-id (the
      // deliveries as the API lists them: eventId is the webhook-id header).
      const events = await poll('every delivery to succeed', async () => {
        const all: Array<{ eventId: string; state: string }> = [];
        for (const id of ids) {
          const listed = await svc.api(`/api/nodes/${id}/webhooks/deliveries`, { token: bob.token }).catch(() => undefined);
          if (listed?.status !== 200) return false;
          all.push(...listed.json.data);
        }
        return all.length > 0 && all.every((d) => d.state === 'succeeded') && all;
      }, 120_000);
      const received = new Map<string, Set<string>>();
      for (const w of receiver.received) received.set(w.id, (received.get(w.id) ?? new Set()).add(w.body));
      expect(events.filter((e) => !received.has(e.eventId)).map((e) => e.eventId), 'never received').toEqual([]);
      expect([...received].filter(([, bodies]) => bodies.size > 1).map(([id]) => id), 'one id, several bodies').toEqual([]);
      await waitForReadyReplicas(2);
    } finally {
      await db.end();
      await receiver.close();
    }
  }, 900_000);

  it('keeps answering through a rolling update of the service (every request during it succeeds)', async () => {
    const before = (await servicePods()).map((p) => p.name);
    await kubectl(['-n', SERVICE_NAMESPACE, 'rollout', 'restart', 'deployment/rln-cloud']);
    const statuses = new Map<string, number>();
    let requests = 0;
    const deadline = Date.now() + 300_000;
    const replaced = async () => {
      const pods = await servicePods();
      return pods.every((p) => !before.includes(p.name)) && pods.filter((p) => p.ready).length === 2;
    };
    while (!(await replaced())) {
      if (Date.now() > deadline) throw new Error(`the rolling update did not finish: ${JSON.stringify(await servicePods())}`);
      // A new connection each time, as many clients make: each is routed afresh by the Service.
      for (let i = 0; i < 10; i++) {
        const r = await freshGet(`${URLS.api}/api/nodes`, alice.token);
        statuses.set(r, (statuses.get(r) ?? 0) + 1);
        requests++;
      }
    }
    expect(Object.fromEntries(statuses), `${requests} requests during the update`).toEqual({ '200': requests });
    await waitForReadyReplicas(2);
  }, 400_000);

  it('destroys the node: its pod and volume go', async () => {
    const r = await svc.api('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
    expect(r.status, r.text).toBe(200);
    await svc.waitForNode(alice, nodeId, 'DESTROYED');
    // Only this node's objects: the rollout test's nodes are another user's and stay.
    const left = await kubectl(['-n', NODES_NAMESPACE, 'get', 'statefulsets,services,pods,pvc,secrets', '-l', `rln-cloud/node-id=${nodeId}`, '-o', 'name']);
    expect(left.trim()).toBe('');
  }, 300_000);
});

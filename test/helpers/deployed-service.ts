// The service deployed INTO the test cluster from deploy/kubernetes/overlays/test-cluster, as an
// operator would: its image built without Docker and imported (scripts/service-image.sh --import),
// a fresh database on the machine's PostgreSQL, Secrets generated into a temporary directory,
// `kubectl apply --server-side`, and what the overlay's addresses point at started here on the
// node address 198.18.1.1 (which pods reach): an S3 server and a TCP forwarder to PostgreSQL,
// which listens only on 127.0.0.1. The host reaches the service through its NodePort Services.
//
// Built for more than one scenario: deployService() gives the running deployment with helpers to
// call it, look at its pods, kill them and wait for the replicas to come back, and to explain a
// failure (kubectl describe, logs, events).
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import S3rver from 's3rver';
import { kubectl } from './kubernetes.ts';
import { repoRoot } from './service-process.ts';
import { rawRequest, tlsRequest, type ClientCredentials, type RawResult } from '../gateway/gateway-client.ts';

/** The node address: on `lo`, reached by pods and the host alike (scripts/test-cluster.sh). */
export const NODE_ADDRESS = '198.18.1.1';
export const SERVICE_NAMESPACE = 'rln-cloud';
export const NODES_NAMESPACE = 'rln-nodes';
export const SERVICE_IMAGE = 'localhost/rln-cloud:dev';
export const OVERLAY_DIR = join(repoRoot, 'deploy/kubernetes/overlays/test-cluster');
/** What the overlay's ConfigMap says (PUBLIC_URL, NODE_API_URL, USER_NODE_URL, S3_*). */
export const URLS = {
  api: `http://${NODE_ADDRESS}:32080`,
  nodeApi: `http://${NODE_ADDRESS}:32081`,
  mtls: `https://${NODE_ADDRESS}:32443`,
};
const S3_PORT = 29000;
const S3_BUCKET = 'rln-log-exports';
/** s3rver's built-in account. */
const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const SELECTOR = 'app.kubernetes.io/name=rln-cloud';

// ---------------------------------------------------------------------------------------------
// Commands

/**
 * Polls `probe` every `intervalMs` until it answers something truthy. Slower than the cluster
 * tests' `until`: every probe here is a kubectl process, and two cores run the cluster too.
 */
export async function poll<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, seen?: () => Promise<unknown>, intervalMs = 1_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) {
      const last = seen ? `; last seen ${JSON.stringify(await seen().catch((err) => String(err)))}` : '';
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the event loop (the forwarder and S3 server live in it). */
export function run(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { cwd: opts.cwd ?? repoRoot, env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')} failed (${err.message.split('\n')[0]}):\n${stderr.slice(-4000)}`)) : resolve({ stdout, stderr }),
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/**
 * Builds the service image (cached by its inputs: ~40 s cold, well under a second after) and
 * imports it into the cluster's containerd (skipped when that content is already there).
 */
export async function buildAndImportImage(): Promise<void> {
  const tar = join(tmpdir(), 'rln-cloud-service-image.tar');
  await run(join(repoRoot, 'scripts/service-image.sh'), ['--import', tar, SERVICE_IMAGE], { timeoutMs: 600_000 });
}

// ---------------------------------------------------------------------------------------------
// What the overlay points at, on the node address

export interface Closable {
  close(): Promise<void>;
}

/** A TCP forwarder: listens on host:port (0: any free port) and pipes each connection to the target. */
export async function startTcpForwarder(listen: { host: string; port?: number }, target: { host: string; port: number }): Promise<Closable & { port: number }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** s3rver with the overlay's bucket, where the overlay's S3_ENDPOINT says. */
export async function startBucket(): Promise<Closable & { endpoint: string }> {
  const directory = mkdtempSync(join(tmpdir(), 'rln-deploy-s3-'));
  const server = new S3rver({ address: NODE_ADDRESS, port: S3_PORT, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }] });
  try {
    await server.run();
  } catch (err) {
    rmSync(directory, { recursive: true, force: true });
    throw new Error(`cannot start s3rver on ${NODE_ADDRESS}:${S3_PORT} (is the test cluster up, or another run still going?): ${(err as Error).message}`);
  }
  return {
    endpoint: `http://${NODE_ADDRESS}:${S3_PORT}`,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface DeployDatabase extends Closable {
  /** As the host reaches it (the operator CLI run here). */
  hostUrl: string;
  /** As the pods reach it: through the forwarder on the node address. */
  podUrl: string;
}

/**
 * A fresh database on the machine's PostgreSQL (TEST_DATABASE_URL's server, else 127.0.0.1:5432 as
 * postgres), and a forwarder on the node address to it. Dropped by close().
 */
export async function createDeployDatabase(): Promise<DeployDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `rln_deploy_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect().catch((err) => {
    throw new Error(`the machine's PostgreSQL at ${adminUrl} cannot be reached: ${err.message}`);
  });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const server = new URL(adminUrl);
  const forwarder = await startTcpForwarder({ host: NODE_ADDRESS }, { host: server.hostname, port: Number(server.port || 5432) });
  const urlFor = (host: string, port: string) => {
    const url = new URL(adminUrl);
    url.hostname = host;
    url.port = port;
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    hostUrl: urlFor(server.hostname, server.port || '5432'),
    podUrl: urlFor(NODE_ADDRESS, String(forwarder.port)),
    async close() {
      await forwarder.close();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Secrets and the rendered manifests

export interface GeneratedSecrets {
  dir: string;
  caCertificatePem: string;
  /** The public key of the keyring's RSA key (X-ThunderStack-Signature): what /api/webhook-public-key must answer. */
  webhookPublicKeyPem: string;
  /** The public key of the keyring's current Ed25519 key (Standard Webhooks). */
  standardWebhooksPublicKeyPem: string;
}

const keyIdOf = (publicKeyDer: Buffer) => `whk_${createHash('sha256').update(publicKeyDer).digest('hex').slice(0, 16)}`;

/**
 * The four Secrets' files, made the way docs/KUBERNETES.md tells an operator to: the CA with openssl
 * (ECDSA P-256), a webhook keyring in the service's JSON format (the current Ed25519 key first, a
 * rotated-out one still signing, and an RSA key for X-ThunderStack-Signature), the database URL
 * and the S3 credentials.
 */
export async function writeSecretFiles(dir: string, databaseUrl: string): Promise<GeneratedSecrets> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'), '-days', '3650',
    '-subj', '/CN=RLN Cloud node access CA (test cluster)',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const key = () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    return {
      id: keyIdOf(publicKey.export({ type: 'spki', format: 'der' })),
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  };
  const current = key();
  const previous = key();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsaPublicDer = rsa.publicKey.export({ type: 'spki', format: 'der' });
  const keyring = {
    version: 1,
    keys: [
      { id: current.id, privateKeyPem: current.privateKeyPem, createdAt: new Date().toISOString(), retiresAt: null },
      { id: previous.id, privateKeyPem: previous.privateKeyPem, createdAt: new Date(Date.now() - 86_400_000).toISOString(), retiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    ],
    rsaKeys: [
      { id: keyIdOf(rsaPublicDer), privateKeyPem: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), createdAt: new Date().toISOString(), signsFrom: null, retiresAt: null },
    ],
  };
  writeFileSync(join(dir, 'webhook-keyring.json'), `${JSON.stringify(keyring, null, 2)}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'unlock-seal-keys'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'database-url'), `${databaseUrl}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 's3-access-key-id'), S3_CREDENTIALS.accessKeyId, { mode: 0o600 });
  writeFileSync(join(dir, 's3-secret-access-key'), S3_CREDENTIALS.secretAccessKey, { mode: 0o600 });
  return { dir, caCertificatePem: readFileSync(join(dir, 'ca.pem'), 'utf8'), webhookPublicKeyPem: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(), standardWebhooksPublicKeyPem: current.publicKeyPem };
}

/**
 * A kustomization in `dir` that takes the test-cluster overlay and adds the Secrets from the files
 * beside it (kustomize refuses absolute paths to a base, hence the relative one). Returns the
 * rendered manifests (`kubectl kustomize`).
 */
export async function renderDeployment(dir: string): Promise<string> {
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `# generated by test/helpers/deployed-service.ts
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${relative(dir, OVERLAY_DIR)}
secretGenerator:
  - {name: rln-cloud-database, namespace: ${SERVICE_NAMESPACE}, files: [url=database-url]}
  - {name: rln-cloud-ca, namespace: ${SERVICE_NAMESPACE}, files: [ca.pem=ca.pem, ca.key=ca.key]}
  - {name: rln-cloud-webhook-keys, namespace: ${SERVICE_NAMESPACE}, files: [signing-keys=webhook-keyring.json]}
  - {name: rln-cloud-unlock-seal, namespace: ${SERVICE_NAMESPACE}, files: [keys=unlock-seal-keys]}
  - {name: rln-cloud-s3, namespace: ${SERVICE_NAMESPACE}, files: [access-key-id=s3-access-key-id, secret-access-key=s3-secret-access-key]}
`,
  );
  return (await run('kubectl', ['kustomize', dir])).stdout;
}

/** The manifests' objects of one kind, as a multi-document YAML stream (kustomize's output order). */
export function documentsOfKind(manifests: string, kind: string): string {
  return manifests
    .split(/^---$/m)
    .filter((doc) => new RegExp(`^kind: ${kind}$`, 'm').test(doc))
    .join('---');
}

/**
 * A server-side dry run of everything, then the real apply. The namespaces are applied first: a
 * dry run creates nothing, so objects in namespaces that do not exist yet would fail it.
 */
export async function applyManifests(manifests: string): Promise<void> {
  await checkNodePortsFree();
  await kubectl(['apply', '--server-side', '-f', '-'], documentsOfKind(manifests, 'Namespace'));
  await kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], manifests);
  await kubectl(['apply', '--server-side', '-f', '-'], manifests);
}

/**
 * The overlay's fixed NodePorts must not be taken by another Service (a node's peer Service of
 * another test gets a random one from the same range): say so plainly instead of failing the apply.
 */
async function checkNodePortsFree(): Promise<void> {
  const wanted = Object.values(URLS).map((u) => Number(new URL(u).port));
  const services = JSON.parse(await kubectl(['get', 'services', '-A', '-o', 'json'])).items;
  for (const svc of services) {
    if (svc.metadata.namespace === SERVICE_NAMESPACE) continue;
    for (const port of svc.spec.ports ?? []) {
      if (wanted.includes(port.nodePort)) {
        throw new Error(`NodePort ${port.nodePort}, which overlays/test-cluster needs, is taken by service ${svc.metadata.namespace}/${svc.metadata.name}`);
      }
    }
  }
}

/** Deletes every object of the manifests (the namespaces with all they hold, nodes included) and waits until they are gone. */
export async function deleteManifests(manifests: string, timeoutMs = 240_000): Promise<void> {
  await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], manifests).catch(() => {});
  await poll(
    `the namespaces ${SERVICE_NAMESPACE} and ${NODES_NAMESPACE} to go`,
    async () => !(await kubectl(['get', 'namespace', SERVICE_NAMESPACE, NODES_NAMESPACE, '--ignore-not-found', '-o', 'name'])).trim(),
    timeoutMs,
    async () => (await kubectl(['get', 'pods', '-n', NODES_NAMESPACE, '-o', 'name', '--ignore-not-found']).catch(String)).trim(),
  );
}

// ---------------------------------------------------------------------------------------------
// The running deployment

export interface ServicePod {
  name: string;
  ready: boolean;
  phase: string;
  restarts: number;
  deleting: boolean;
}

export async function servicePods(): Promise<ServicePod[]> {
  const list = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'pods', '-l', SELECTOR, '-o', 'json']));
  return list.items.map((p: any) => ({
    name: p.metadata.name,
    ready: (p.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'),
    phase: p.status.phase,
    restarts: (p.status.containerStatuses ?? []).reduce((n: number, c: any) => n + c.restartCount, 0),
    deleting: Boolean(p.metadata.deletionTimestamp),
  }));
}

/** What a failure needs explained: the Deployment, its pods (described, and their logs), the nodes' objects, recent events. */
export async function diagnostics(): Promise<string> {
  // each section cut to its last lines, so one long log does not push the others out
  const section = async (title: string, args: string[], lines = 60) => {
    const text = (await kubectl(args).catch((err) => String(err))).trim().split('\n');
    return `--- ${title}${text.length > lines ? ` (last ${lines} lines)` : ''}\n${text.slice(-lines).join('\n')}\n`;
  };
  const out = [
    await section('deployment', ['-n', SERVICE_NAMESPACE, 'describe', 'deployment', 'rln-cloud'], 40),
    await section('service pods', ['-n', SERVICE_NAMESPACE, 'describe', 'pods', '-l', SELECTOR], 120),
  ];
  for (const pod of await servicePods().catch(() => [])) {
    out.push(await section(`logs of ${pod.name}`, ['-n', SERVICE_NAMESPACE, 'logs', pod.name, '--tail=200'], 40));
    if (pod.restarts > 0) out.push(await section(`previous logs of ${pod.name}`, ['-n', SERVICE_NAMESPACE, 'logs', pod.name, '--previous', '--tail=200'], 30));
  }
  out.push(await section('node objects', ['-n', NODES_NAMESPACE, 'get', 'pods,statefulsets,services,pvc', '-o', 'wide']));
  for (const ns of [SERVICE_NAMESPACE, NODES_NAMESPACE]) out.push(await section(`events in ${ns}`, ['-n', ns, 'get', 'events', '--sort-by=.lastTimestamp'], 30));
  return out.join('\n');
}

/** Runs `step`; a failure is rethrown with the cluster's side of the story appended. */
export async function explained<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${what}: ${message}\n\n${await diagnostics()}`);
  }
}

/** Waits until the Deployment has `count` updated, ready replicas and no others. */
export async function waitForReadyReplicas(count: number, timeoutMs = 300_000): Promise<void> {
  await explained(`waiting for ${count} ready replicas`, () =>
    poll(
      `${count} ready replicas of the service`,
      async () => {
        const d = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'deployment', 'rln-cloud', '-o', 'json']));
        const s = d.status ?? {};
        return s.observedGeneration >= d.metadata.generation && s.updatedReplicas === count && s.readyReplicas === count && (s.replicas ?? 0) === count;
      },
      timeoutMs,
      async () => (await servicePods()).map((p) => `${p.name} ${p.phase} ready=${p.ready} restarts=${p.restarts}`),
    ),
  );
}

/** Deletes a replica's pod (`force`: at once, as a crash would look; else with its grace period). */
export async function killPod(name: string, opts: { force?: boolean } = {}): Promise<void> {
  const force = opts.force ? ['--grace-period=0', '--force'] : [];
  await kubectl(['-n', SERVICE_NAMESPACE, 'delete', 'pod', name, '--wait=false', ...force]);
}

export async function scaleReplicas(count: number): Promise<void> {
  await kubectl(['-n', SERVICE_NAMESPACE, 'scale', 'deployment', 'rln-cloud', `--replicas=${count}`]);
}

export interface Call {
  status: number;
  json: any;
  text: string;
}

export interface DeployedUser {
  id: string;
  email: string;
  token: string;
}

export interface DeployedService {
  manifests: string;
  secrets: GeneratedSecrets;
  /** Seconds each step of deployService took (image, apply, ready replicas), for slow-machine tuning. */
  timings: Record<string, number>;
  database: DeployDatabase;
  /** The management API through its NodePort, with a bearer token. */
  api(path: string, opts?: { method?: string; token?: string; body?: unknown }): Promise<Call>;
  /** A node's REST API through the bearer gateway. */
  bearer(user: DeployedUser, nodeId: string, path: string, opts?: { method?: string; body?: unknown }): Promise<RawResult>;
  /** A node's REST API through the mutual-TLS gateway, with a client certificate from generate-cert. */
  mtls(user: DeployedUser, nodeId: string, path: string, cert: ClientCredentials): Promise<RawResult>;
  /** The operator CLI inside a replica (`kubectl exec ... rln-cloud <args> --json`). */
  execCli(args: string[]): Promise<any>;
  /** The operator CLI on this machine, straight on the database (DATABASE_URL). */
  hostCli(args: string[]): Promise<any>;
  /** A user and an API token (the user made in a replica, the token on the host). */
  createUser(plan?: string): Promise<DeployedUser>;
  waitForNode(user: DeployedUser, nodeId: string, status: string, timeoutMs?: number): Promise<any>;
  /** Deletes everything the manifests made and waits for the namespaces (and node pods) to go; stops the S3 server and forwarder, drops the database. */
  teardown(): Promise<void>;
}

const oneJsonLine = (out: string, what: string) => {
  const lines = out.trim().split('\n');
  try {
    return JSON.parse(lines.at(-1)!);
  } catch {
    throw new Error(`${what}: expected a JSON line, got:\n${out}`);
  }
};

/**
 * The whole deployment, ready: image, database, S3, Secrets, apply, `replicas` ready replicas.
 * Whatever was started is stopped again when a step fails.
 */
export async function deployService(opts: { replicas?: number } = {}): Promise<DeployedService> {
  const started: Closable[] = [];
  const workDir = mkdtempSync(join(tmpdir(), 'rln-deploy-'));
  const hostDataDir = join(workDir, 'cli-data');
  let manifests = '';
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await work();
    } finally {
      timings[step] = Math.round((Date.now() - t0) / 100) / 10;
    }
  };
  const cleanUp = async () => {
    if (manifests) await deleteManifests(manifests).catch(() => {});
    for (const c of started.reverse()) await c.close().catch(() => {});
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    // Leftovers of an earlier run that did not finish would hold the fixed ports and names.
    await timed('leftovers', () =>
      deleteManifests(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${SERVICE_NAMESPACE}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ${NODES_NAMESPACE}}\n`),
    );
    await timed('image', buildAndImportImage);
    const database = await createDeployDatabase();
    started.push(database);
    started.push(await startBucket());
    const secrets = await writeSecretFiles(join(workDir, 'kustomization'), database.podUrl);
    manifests = await renderDeployment(secrets.dir);
    await timed('apply', () => explained('applying the manifests', () => applyManifests(manifests)));
    if (opts.replicas !== undefined && opts.replicas !== 2) await scaleReplicas(opts.replicas);
    await timed('ready', () => waitForReadyReplicas(opts.replicas ?? 2));

    const api: DeployedService['api'] = async (path, o = {}) => {
      const res = await fetch(`${URLS.api}${path}`, {
        method: o.method ?? 'GET',
        headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
        signal: AbortSignal.timeout(90_000),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: res.status, json, text };
    };
    const cliEnv: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.hostUrl, DATA_DIR: hostDataDir, LOG_LEVEL: 'warn' };
    delete cliEnv.NODE_OPTIONS; // vitest's loader is not the CLI's
    const service: DeployedService = {
      manifests,
      timings,
      secrets,
      database,
      api,
      bearer: (user, nodeId, path, o = {}) =>
        rawRequest(URLS.nodeApi, `/${user.id}/${nodeId}${path}`, {
          method: o.method,
          body: o.body === undefined ? undefined : JSON.stringify(o.body),
          headers: { authorization: `Bearer ${user.token}`, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        }),
      mtls: (user, nodeId, path, cert) => tlsRequest(URLS.mtls, `/nodes/${user.id}/${nodeId}${path}`, { ...cert, ca: cert.certificateChain }),
      async execCli(args) {
        const out = await kubectl(['-n', SERVICE_NAMESPACE, 'exec', 'deployment/rln-cloud', '--', 'rln-cloud', ...args, '--json']);
        return oneJsonLine(out, `rln-cloud ${args.join(' ')} in a replica`);
      },
      async hostCli(args) {
        const { stdout } = await run(process.execPath, [join(repoRoot, 'bin/rln-cloud.mjs'), ...args, '--json'], { env: cliEnv });
        return oneJsonLine(stdout, `rln-cloud ${args.join(' ')}`);
      },
      async createUser(plan = 'starter') {
        const email = `deploy-${randomBytes(4).toString('hex')}@example.com`;
        const user = await service.execCli(['user', 'create', email, '--plan', plan]);
        if (!user.id) throw new Error(`user create answered ${JSON.stringify(user)}`);
        const token = await service.hostCli(['token', 'create', email, '--name', 'deploy-test']);
        if (!token.token) throw new Error(`token create answered ${JSON.stringify(token)}`);
        return { id: user.id, email, token: token.token };
      },
      async waitForNode(user, nodeId, status, timeoutMs = 180_000) {
        let last: any;
        await poll(
          `node ${nodeId} to be ${status}`,
          async () => {
            // long-polls: the service answers as soon as the node has that status (at most 20 s)
            const r = await api(`/api/nodes/${nodeId}?waitFor=${status}&timeout=20`, { token: user.token }).catch((err) => ({ status: 0, json: undefined, text: String(err) }));
            last = r.json?.data ?? r.text;
            return last?.status === status ? last : undefined;
          },
          timeoutMs,
          async () => last,
        ).catch(async (err) => {
          throw new Error(`${err.message}\n\n${await diagnostics()}`);
        });
        return last;
      },
      teardown: () => timed('teardown', cleanUp),
    };
    return service;
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

// Running the real devnode process in tests, as the service's process runtime does: through
// bin/devnode.mjs, on free ports, in temporary directories. Shared by devnode's end-to-end tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LAUNCHER = fileURLToPath(new URL('../bin/devnode.mjs', import.meta.url));

const tempDirs: string[] = [];
const children = new Set<ChildProcess>();

/** For each test file's afterAll: kills what is still running and removes the temporary directories. */
export function cleanUpDevnodes(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A storage directory path under a fresh temporary directory (the storage itself is not created). */
export function tempStorage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'devnode-test-'));
  tempDirs.push(dir);
  return join(dir, 'storage');
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
}

export function spawnDevnode(args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [LAUNCHER, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

export interface DevnodeProcess extends Spawned {
  port: number;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/** Starts devnode on free ports (regtest) and waits for its start-up line. */
export async function startNode(storage: string, opts: { auth?: string[]; env?: Record<string, string> } = {}): Promise<DevnodeProcess> {
  const port = await freePort();
  const peerPort = await freePort();
  const auth = opts.auth ?? ['--disable-authentication'];
  const spawned = spawnDevnode(
    [storage, '--daemon-listening-port', String(port), '--ldk-peer-listening-port', String(peerPort), '--network', 'regtest', ...auth],
    opts.env,
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (spawned.stdout().includes(' started: ')) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
    void spawned.exited.then((exit) => {
      clearInterval(timer);
      reject(new Error(`devnode exited during start-up (${JSON.stringify(exit)}): ${spawned.stdout()}${spawned.stderr()}`));
    });
  });
  const call: DevnodeProcess['call'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  return { ...spawned, port, call };
}

export async function stopNode(node: DevnodeProcess): Promise<Exit> {
  node.child.kill('SIGTERM');
  return node.exited;
}

// Draining a listener on real sockets: what is in flight finishes, kept-alive idle connections
// close without waiting for the client, new connections are refused, and the deadline cuts the rest.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainServer } from './drain.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function get(port: number, path: string, agent: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

let server: http.Server;
const agents: http.Agent[] = [];
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  for (const a of agents) a.destroy();
});

async function listen(handler: http.RequestListener) {
  server = http.createServer({ keepAliveTimeout: 60_000 }, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

const keepAlive = () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  agents.push(agent);
  return agent;
};

describe('drainServer', () => {
  it('lets a request in flight finish, closes idle kept-alive connections at once, and refuses new ones', async () => {
    const port = await listen((req, res) => {
      if (req.url === '/slow') setTimeout(() => res.end('slow done'), 400);
      else res.end('quick');
    });
    const idle = keepAlive();
    expect((await get(port, '/quick', idle)).body).toBe('quick');
    let idleClosed = false;
    for (const sockets of Object.values(idle.freeSockets)) for (const s of sockets ?? []) s.on('close', () => (idleClosed = true));

    const busy = keepAlive();
    const slow = get(port, '/slow', busy);
    await sleep(100);
    const t0 = Date.now();
    const draining = drainServer(server, Date.now() + 10_000);
    await sleep(150);
    expect(idleClosed).toBe(true);
    await expect(get(port, '/quick', new http.Agent())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await slow).toEqual({ status: 200, body: 'slow done' });
    expect(await draining).toBe(true);
    // Done once the slow answer went out, not at the deadline.
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('cuts a response still streaming at the deadline and says so', async () => {
    const port = await listen((_req, res) => {
      res.write('first part');
      // never ends: a gateway stream whose client outlives the grace period
    });
    const streaming = get(port, '/', keepAlive()).catch((err: NodeJS.ErrnoException) => err);
    await sleep(100);
    const t0 = Date.now();
    expect(await drainServer(server, Date.now() + 300)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    const outcome = await streaming;
    expect(outcome).toBeInstanceOf(Error);
  });

  it('is done at once for a server that is not listening', async () => {
    server = http.createServer();
    expect(await drainServer(server, Date.now() + 10_000)).toBe(true);
  });
});

// A webhook receiver written from the original service's public docs, against this service with
// only the base URL changed: it fetches the PEM in `data` of GET /api/webhook-public-key (with the
// original's headers: a bare token, JSON content type), and accepts a POST only when
// X-ThunderStack-Signature, a base64 RSA-SHA256 (PKCS#1 v1.5) signature, verifies over the raw body
// (the docs' first way) or over JSON.stringify of the parsed body (their fallback). It reads the
// event as the docs describe it: {eventType: "NODE_STATUS_UPDATED", eventTimestamp, details: {nodeId, status}, nodeId}.
import { createVerify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

interface DocsEvent {
  eventType: string;
  eventTimestamp: string;
  details: { nodeId: string; status: string };
  nodeId: string;
}

const verifies = (pem: string, signature: string, text: string) => createVerify('RSA-SHA256').update(text).verify(pem, signature, 'base64');

/** The docs' receiver: 401 to anything whose signature does not verify, 200 and kept otherwise. */
function docsReceiver(publicKeyPem: () => string) {
  const accepted: Array<{ event: DocsEvent; how: 'raw' | 'parsed' }> = [];
  let rejected = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const signature = req.headers['x-thunderstack-signature'];
      const pem = publicKeyPem();
      let how: 'raw' | 'parsed' | undefined;
      if (typeof signature === 'string') {
        if (verifies(pem, signature, raw)) how = 'raw';
        else if (verifies(pem, signature, JSON.stringify(JSON.parse(raw)))) how = 'parsed';
      }
      if (!how) {
        rejected++;
        res.writeHead(401).end('invalid signature');
        return;
      }
      accepted.push({ event: JSON.parse(raw) as DocsEvent, how });
      res.writeHead(200).end('ok');
    });
  });
  return { server, accepted, rejected: () => rejected };
}

describe(`a webhook receiver written from the original's docs on ${databaseLabel()}`, () => {
  let t: TestServer;
  let user: TestUser;
  let receiver: ReturnType<typeof docsReceiver>;
  let pem = '';
  beforeAll(async () => {
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    user = await t.createUser('scale');
    receiver = docsReceiver(() => pem);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    receiver?.server.close();
    await t?.stop();
  });

  it('fetches the key the original way and accepts every status update of a node, none rejected', async () => {
    const key = await fetch(`${t.base}/api/webhook-public-key`, { headers: { 'Content-Type': 'application/json', Authorization: user.token } });
    expect(key.status).toBe(200);
    pem = ((await key.json()) as { data: string }).data;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);

    const url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks/rln`;
    const created = await t.call('/api/nodes', { method: 'POST', headers: { authorization: user.token }, body: { name: 'hooked', network: 'regtest', settings: { webhookUrl: url } } });
    expect(created.status, created.text).toBe(200);
    const nodeId: string = created.json.data.nodeId;

    const deadline = Date.now() + 60_000;
    while (!receiver.accepted.some((a) => a.event.details?.status === 'RUNNING') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const events = receiver.accepted.map((a) => a.event);
    expect(events.map((e) => e.details.status)).toContain('RUNNING');
    for (const e of events) {
      expect(e).toMatchObject({ eventType: 'NODE_STATUS_UPDATED', nodeId, details: { nodeId, status: expect.any(String) } });
      expect(Number.isNaN(Date.parse(e.eventTimestamp))).toBe(false);
    }
    // The raw body verifies: the docs' first way, and the parsed body is the same bytes.
    expect(receiver.accepted.every((a) => a.how === 'raw')).toBe(true);
    expect(receiver.rejected()).toBe(0);
  });
});

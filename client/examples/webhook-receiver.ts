// client/examples/webhook-receiver.ts: a receiver for a node's settings.webhookUrl that accepts only
// webhooks this service signed.
import http from 'node:http';
import { createRlnCloudClient, fetchWebhookPublicKeys, verifyWebhook, WebhookVerificationError } from '@rln-cloud/client';

const client = createRlnCloudClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.RLN_CLOUD_TOKEN! });
// The Standard Webhooks keys of GET /api/webhook-public-keys, imported once; fetched again once
// when none verifies a webhook (a key rotation happened since).
let publicKeys = await fetchWebhookPublicKeys(client);
const seen = new Set<string>();

http
  .createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // The raw body as received: the signature covers its exact bytes.
    const verify = () => verifyWebhook({ publicKey: publicKeys, headers: req.headers, body: Buffer.concat(chunks) });
    try {
      const { webhookId, event } = await verify().catch(async (err: unknown) => {
        if (!(err instanceof WebhookVerificationError)) throw err;
        publicKeys = await fetchWebhookPublicKeys(client);
        return verify();
      });
      // Delivery is at least once: a retry or a redelivery carries the same webhook-id.
      if (!seen.has(webhookId)) {
        seen.add(webhookId);
        console.log(event.eventType, event.nodeId, event.details);
      }
      res.writeHead(204).end();
    } catch (err) {
      res.writeHead(err instanceof WebhookVerificationError ? 401 : 500).end();
    }
  })
  .listen(3000);

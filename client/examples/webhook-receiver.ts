// client/examples/webhook-receiver.ts: a receiver for a node's settings.webhookUrl that accepts only
// webhooks this service signed.
import http from 'node:http';
import { createRlnCloudClient, fetchWebhookPublicKey, verifyWebhook, WebhookVerificationError } from '@rln-cloud/client';

const client = createRlnCloudClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.RLN_CLOUD_TOKEN! });
// GET /api/webhook-public-key, imported once. After a key rotation, fetch it again.
const publicKey = await fetchWebhookPublicKey(client);
const seen = new Set<string>();

http
  .createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      // The raw body as received: the signature covers its exact bytes.
      const { webhookId, event } = await verifyWebhook({ publicKey, headers: req.headers, body: Buffer.concat(chunks) });
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

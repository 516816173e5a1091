// client/examples/follow-events.ts: every event of your nodes as it happens, resumed after a restart.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRlnCloudClient, followEvents } from '@rln-cloud/client';

const client = createRlnCloudClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.RLN_CLOUD_TOKEN! });

// GET /api/events/stream: a dropped connection is resumed with Last-Event-ID by followEvents itself;
// keep the cursor to resume after this process restarts too.
const saved = existsSync('events.cursor') ? readFileSync('events.cursor', 'utf8') : undefined;
for await (const { cursor, event } of followEvents(client, { lastEventId: saved })) {
  console.log(event.eventTimestamp, event.nodeId, event.eventType, JSON.stringify(event.details));
  writeFileSync('events.cursor', cursor);
}

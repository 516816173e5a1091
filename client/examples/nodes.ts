// client/examples/nodes.ts: create a node, wait for RUNNING, initialise and unlock it, list nodes.
import { createRlnCloudClient, waitForNode } from '@rln-cloud/client';

const client = createRlnCloudClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.RLN_CLOUD_TOKEN! });
const password = process.env.NODE_PASSWORD!;

// The body, the path and the answer are typed from the OpenAPI document; an error answer is
// `error`, the API's error body, typed as well.
const { data, error } = await client.POST('/api/nodes', { body: { name: 'my-node', network: 'regtest' } });
if (error) throw new Error(`${error.error.code}: ${error.error.message}`);
const nodeId = data.data.nodeId;

// The API's long poll (GET /api/nodes/{id}?waitFor=RUNNING), repeated until the timeout.
const node = await waitForNode(client, nodeId, 'RUNNING', { timeoutMs: 60_000 });
console.log(node.name, node.status, node.invoke_url);

// A new node's wallet is created once; it is unlocked after every daemon start.
const init = await client.POST('/api/nodes/{id}/init', { params: { path: { id: nodeId } }, body: { password } });
if (init.error) throw new Error(init.error.error.message);
console.log('write the mnemonic down, it is shown once:', init.data.data.mnemonic);
const unlock = await client.POST('/api/nodes/{id}/unlock', { params: { path: { id: nodeId } }, body: { password } });
if (unlock.error?.error.code === 'wrong_password') throw new Error('wrong password');

// Every node, a page of 50 at a time.
let cursor: string | undefined;
do {
  const page = await client.GET('/api/nodes', { params: { query: { limit: '50', cursor } } });
  if (page.error) throw new Error(page.error.error.message);
  for (const n of page.data.nodes) console.log(n.nodeId, n.name, n.status, n.locked ? 'locked' : 'unlocked');
  cursor = page.data.nextCursor ?? undefined;
} while (cursor);

// @rln-cloud/client: the typed client of the RLN Cloud management API and the helpers the examples
// of docs/API.md use. The types of every route are in ./schema.ts, generated from openapi.json.
export {
  createRlnCloudClient,
  RlnCloudError,
  type RlnCloudClient,
  type RlnCloudClientOptions,
  type ApiError,
  type ErrorCode,
  type Node,
  type NodeStatus,
  type Build,
  type Backup,
  type WebhookDelivery,
  type WebhookEvent,
} from './client.ts';
export { waitForNode, type WaitOptions } from './wait-for-node.ts';
export { followEvents, EVENTS_STREAM_PATH, type FollowedEvent, type FollowOptions, type NodeEvent } from './follow-events.ts';
export { parseEventStream, type ServerSentEvent } from './event-stream.ts';
export {
  verifyWebhook,
  importWebhookPublicKey,
  fetchWebhookPublicKey,
  fetchWebhookPublicKeys,
  WebhookVerificationError,
  type VerifiedWebhook,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookPublicKey,
} from './verify-webhook.ts';
export type { paths, components, operations, webhooks } from './schema.ts';

// The typed client: openapi-fetch over the `paths` generated from the OpenAPI document, with the
// API token on every request. Calls answer `{data}` or `{error}` (the API's error body), typed per
// route and status; nothing throws for an error answer, only for a failed connection.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type RlnCloudClient = Client<paths>;

export type Node = components['schemas']['Node'];
export type NodeStatus = Node['status'];
export type Build = components['schemas']['Build'];
export type Backup = components['schemas']['Backup'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
/** The body of a webhook, `{eventType, eventTimestamp, nodeId, details}`. */
export type WebhookEvent = components['schemas']['WebhookEvent'];
/** The one error body of the API, `{error: {code, message, requestId, details?}}`. */
export type ApiError = components['schemas']['Error'];
export type ErrorCode = ApiError['error']['code'];

export interface RlnCloudClientOptions {
  /** The service's PUBLIC_URL, e.g. `http://127.0.0.1:8080`; every path starts with /api. */
  baseUrl: string;
  /** An API token (POST /api/tokens, `rln-cloud token create`, or data/dev-token). */
  token: string;
  /** Another fetch (a proxy, retries, a test double); globalThis.fetch by default. */
  fetch?: ClientOptions['fetch'];
  /** Headers sent with every request besides `authorization`. */
  headers?: Record<string, string>;
}

export function createRlnCloudClient({ baseUrl, token, fetch, headers }: RlnCloudClientOptions): RlnCloudClient {
  return createClient<paths>({ baseUrl, fetch, headers: { ...headers, authorization: `Bearer ${token}` } });
}

/**
 * An error answer, thrown by the helpers that cannot hand back `{error}` (waitForNode,
 * followEvents). `body` is the API's error body, or the text of an answer that was not one (a
 * proxy's 502 page).
 */
export class RlnCloudError extends Error {
  readonly status: number;
  readonly body: ApiError | string | undefined;
  constructor(status: number, body: unknown) {
    const apiError = isApiError(body) ? body : undefined;
    super(apiError ? `${status} ${apiError.error.code}: ${apiError.error.message}` : `${status}: ${typeof body === 'string' ? body.slice(0, 200) : 'no body'}`);
    this.name = 'RlnCloudError';
    this.status = status;
    this.body = apiError ?? (typeof body === 'string' ? body : undefined);
  }

  /** The API's error code (`node_not_found`, ...), when the answer was the API's error body. */
  get code(): ErrorCode | undefined {
    return typeof this.body === 'object' ? this.body.error.code : undefined;
  }
}

function isApiError(body: unknown): body is ApiError {
  const error = (body as { error?: { code?: unknown } } | undefined)?.error;
  return typeof error === 'object' && error !== null && typeof error.code === 'string';
}

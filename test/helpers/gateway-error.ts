// Reads an error the gateways made themselves: RLN's shape `{error: "<sentence>", code: <status>,
// name}` with the service's own code under `rln_cloud` (src/gateway/gateway-reply.ts). Checks the
// shape on every read, so each gateway test that looks at an error also proves the shape.
import { expect } from 'vitest';

export interface GatewayError {
  code: string;
  message: string;
  name: string;
  requestId: string;
  details?: Record<string, unknown>;
}

export function gatewayError(r: { status: number; json: any; text?: string }): GatewayError {
  expect(typeof r.json?.error, r.text ?? JSON.stringify(r.json)).toBe('string');
  expect(r.json.code).toBe(r.status);
  expect(r.json.name).toMatch(/^[A-Z][A-Za-z]+$/);
  expect(typeof r.json.rln_cloud?.code).toBe('string');
  return { code: r.json.rln_cloud.code, message: r.json.error, name: r.json.name, requestId: r.json.rln_cloud.requestId, details: r.json.rln_cloud.details };
}

// The running service builds its docs listener at the first request for the document or the docs
// page (api/server.ts, serveDocsFrom): both answer as the listener with the plugins answers them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../helpers/registered-routes.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('the docs page and the document of a running service', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  it('are not built before they are asked for', () => {
    expect(t.server.api.hasDecorator('swagger')).toBe(false);
    expect(registeredRoutes(t.server.api).filter((r) => r.includes('/api/docs'))).toEqual(['GET /api/docs', 'GET /api/docs/*']);
  });

  it('serve the page, its files and the document, the same document at both addresses', async () => {
    const page = await fetch(`${t.base}/api/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/img-src 'self' data:/);
    expect(page.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await page.text()).toMatch(/<title>RLN Cloud API<\/title>/);
    const favicon = await fetch(`${t.base}/api/docs/static/theme/favicon.svg`);
    expect(favicon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const head = await fetch(`${t.base}/api/docs/static/swagger-initializer.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const fromPage = await (await fetch(`${t.base}/api/docs/json`)).json();
    const served = await (await fetch(`${t.base}/api/openapi.json`)).json();
    expect(served).toEqual(fromPage);
    expect(served.servers).toEqual([{ url: t.config.publicUrl, description: 'This service (PUBLIC_URL)' }]);
    expect((await fetch(`${t.base}/api/docs/no-such-file`)).status).toBe(404);
  });
});

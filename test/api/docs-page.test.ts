// The docs page at /api/docs is RLN Cloud's: its title, favicon and top-bar logo, not Swagger UI's
// and Fastify's defaults. Served over real HTTP by the management listener, on the offline
// services (no database: the page only reads the OpenAPI document).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOfflineApiServer } from '../../src/composition/openapi-document.ts';

describe('the docs page', () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = await buildOfflineApiServer();
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is titled RLN Cloud and says nothing of Fastify', async () => {
    const res = await fetch(`${base}/api/docs/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const head = html.slice(0, html.indexOf('</head>'));
    expect(head).toMatch(/<title>RLN Cloud API<\/title>/);
    expect(html).not.toMatch(/fastify|swagger ui/i);
    // Our favicon, not Swagger's.
    expect(head).toContain('theme/favicon.svg');
    expect(head).not.toContain('favicon-32x32.png');
    const favicon = await fetch(`${base}/api/docs/static/theme/favicon.svg`);
    expect(favicon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it('puts the RLN Cloud logo in the top bar, where Fastify\'s was', async () => {
    const script = await (await fetch(`${base}/api/docs/static/swagger-initializer.js`)).text();
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(script);
    expect(logo, 'the initializer replaces the top-bar logo').not.toBeNull();
    const svg = Buffer.from(logo![1]!, 'base64').toString('utf8');
    expect(svg).toContain('RLN Cloud');
    expect(svg).not.toMatch(/fastify/i);
  });

  it('keeps its content security policy and still loads the document', async () => {
    const res = await fetch(`${base}/api/docs/`);
    expect(res.headers.get('content-security-policy')).toMatch(/img-src 'self' data:/);
    const document = await (await fetch(`${base}/api/docs/json`)).json();
    expect(document.info.title).toBe('RLN Cloud management API');
  });
});

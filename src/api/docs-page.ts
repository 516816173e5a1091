// The docs page at /api/docs (@fastify/swagger-ui): Swagger UI over /api/openapi.json, titled and
// branded as RLN Cloud. Left to its defaults the page is titled "Swagger UI" and its top bar shows
// Fastify's logo, which tells a reader what the service is built with rather than what it is.
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

// The web UI's mark (src/web/public/favicon.svg), the same drawing in both places.
const MARK = '<rect width="32" height="32" rx="7" fill="#4f46e5"/><path d="M18 4 8 18h7l-2 10 11-15h-7z" fill="#fde047"/>';
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${MARK}</svg>`;
// White text: the top bar is dark. Swagger UI draws the logo 40 px high.
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 32" width="250" height="40">' +
  `<g>${MARK}</g>` +
  '<text x="42" y="23" fill="#ffffff" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="19" font-weight="700">RLN Cloud API</text>' +
  '</svg>';

export const DOCS_PAGE_PATH = '/api/docs';

export const docsPageOptions: FastifySwaggerUiOptions = {
  routePrefix: DOCS_PAGE_PATH,
  // The library's own content security policy (hashes of its inline parts); the logo is a data: URL, which it allows.
  staticCSP: true,
  logo: { type: 'image/svg+xml', content: LOGO, href: DOCS_PAGE_PATH, target: '_self' },
  theme: {
    title: 'RLN Cloud API',
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: ICON }],
    // The web UI's top bar colour.
    css: [{ filename: 'rln-cloud.css', content: '.swagger-ui .topbar { background-color: #161a2e; }' }],
  },
};

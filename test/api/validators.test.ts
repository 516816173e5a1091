// Request validators are compiled on first use (src/api/validator-cache.ts). This proves every
// body, query string and path schema of the API compiles and refuses what it should, as it did
// when Fastify compiled them all before listening.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAllValidators } from '../../src/api/server.ts';
import { lazyValidators } from '../../src/api/validator-cache.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('request validators', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  it('every request schema of the API compiles and refuses input of the wrong shape', async () => {
    const validators = (await compileAllValidators(t.server.api)).all();
    // Bodies, query strings and paths of ~50 routes, the same schema counted once.
    expect(validators.length).toBeGreaterThan(20);
    for (const { route, validate } of validators) {
      const what = `${route.method} ${route.url} ${route.httpPart}`;
      const schema = route.schema as { type?: string; additionalProperties?: unknown };
      expect(validate.schemaEnv, what).toBeDefined();
      if (schema.type === 'object') {
        expect(validate(42), what).toBe(false);
        expect(validate.errors?.[0]?.message, what).toBe('must be object');
      }
      if (schema.additionalProperties === false) {
        expect(validate({ 'not-a-field': 1 }), what).toBe(false);
        expect(validate.errors?.length, what).toBeGreaterThan(0);
      }
    }
  });

  it('a bad body is refused by a route whose validator was not compiled yet', async () => {
    const fresh = await startTestServer();
    try {
      const user = await fresh.createUser();
      const res = await fresh.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 5 } });
      expect(res.status).toBe(400);
    } finally {
      await fresh.stop();
    }
  });

  it('a schema that cannot compile fails when it is compiled, and keeps failing', async () => {
    const validators = lazyValidators();
    const build = (validators.factory as unknown as (e: object, o: object) => (r: object) => (d: unknown) => unknown)({}, {});
    const validate = build({ schema: { $ref: 'missing#' }, method: 'POST', url: '/', httpPart: 'body' });
    await expect(validators.compileRest()).rejects.toThrow();
    expect(() => validate({})).toThrow();
  });
});

// Response serializers are compiled on first use (src/api/serializer-cache.ts). This proves every
// response schema of the API compiles, as Fastify proved it at start-up when it compiled them all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAllSerializers } from '../../src/api/server.ts';
import { lazySerializers } from '../../src/api/serializer-cache.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('response serializers', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  it('every response schema of the API compiles', async () => {
    await expect(compileAllSerializers(t.server.api)).resolves.toBeUndefined();
  });

  it('a schema that cannot compile fails when it is compiled, and keeps failing', async () => {
    const serializers = lazySerializers();
    const build = serializers.factory({}, {});
    const serialize = build({ schema: { $ref: 'missing#' }, method: 'GET', url: '/', httpStatus: '200' });
    await expect(serializers.compileRest()).rejects.toThrow();
    expect(() => serialize({})).toThrow();
  });
});

// LDK's VSS protocol on the API listener (docs/VSS.md): POST {PUBLIC_URL}/vss/<node id>/<credential>/
// getObject | putObjects | deleteObject | listKeyVersions, binary protobuf in and out, errors as an
// ErrorResponse with the reference server's statuses. Not in the OpenAPI document (not JSON).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { decodeMessage, encodeMessage, VSS_ERROR_STATUS, VssError, VssErrorCode, VssMessages, type KeyValue } from '../../vss/messages.ts';
import { VSS_PATH, VssAuthError, type VssMetrics, type VssService } from '../../vss/vss-service.ts';
import type { ListRequest, PutRequest } from '../../vss/store-service.ts';

// A put carries whole channel monitors (tens of kB to a few MB each) and up to 1,000 items; the
// reference allows 1 GiB, which would let one request hold that much of this process's memory.
export const VSS_BODY_LIMIT = 64 * 1024 * 1024;

type Params = { nodeId: string; credential: string };
type Outcome = Parameters<VssMetrics['vssAnswered']>[1];

const OPERATIONS = ['getObject', 'putObjects', 'deleteObject', 'listKeyVersions'] as const;
const OUTCOMES: Record<VssErrorCode, Outcome> = { 0: 'error', 1: 'conflict', 2: 'invalid', 3: 'error', 4: 'no_such_key', 5: 'refused' };
const started = new WeakMap<FastifyRequest, number>();
const writtenBytes = (put: PutRequest) => put.transactionItems.reduce((sum, item) => sum + item.value.length, 0);

export function vssRoutes(app: FastifyInstance, vss: VssService) {
  return app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: VSS_BODY_LIMIT }, (_req, body, done) => done(null, body));
      scope.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
        const operation = request.url.slice(request.url.lastIndexOf('/') + 1);
        if (err instanceof VssError) {
          if (err instanceof VssAuthError) vss.metrics?.vssRefused(err.reason);
          report(operation, OUTCOMES[err.code], request);
          return sendError(reply, err);
        }
        report(operation, err.statusCode && err.statusCode < 500 ? 'invalid' : 'error', request);
        // Fastify's own refusals (a body too large, a bad content length) and undecodable bodies: plain, like the reference.
        if (err.statusCode === 413) return reply.status(413).type('text/plain').send('request body too large');
        if (err.statusCode && err.statusCode < 500) return reply.status(400).type('text/plain').send('bad request');
        request.log.error({ err }, 'VSS request failed');
        return sendError(reply, new VssError(VssErrorCode.INTERNAL, 'internal error'));
      });

      const report = (operation: string, outcome: Outcome, request: FastifyRequest, bytes = 0) => {
        // Only the four operations are labels: an unknown path must not make a series.
        if (!vss.metrics || !(OPERATIONS as readonly string[]).includes(operation)) return;
        vss.metrics.vssAnswered(operation, outcome, (performance.now() - (started.get(request) ?? performance.now())) / 1000, bytes);
      };
      scope.addHook('onRequest', async (request) => {
        started.set(request, performance.now());
      });

      // Each handler authenticates the caller itself: a put does it in its write (VssService.putObjects).
      type Caller = { nodeId: string; credential: string; authorization: string | undefined };
      const route = <Req, Res extends object>(
        op: string,
        type: (typeof VssMessages)[keyof typeof VssMessages],
        answerType: (typeof VssMessages)[keyof typeof VssMessages],
        handle: (caller: Caller, req: Req) => Promise<Res>,
      ) =>
        scope.post<{ Params: Params }>(`/:nodeId/:credential/${op}`, { schema: { hide: true } }, async (request, reply) => {
          const body = decodeBody<Req>(type, request);
          const answer = await handle({ ...request.params, authorization: request.headers.authorization }, body);
          report(op, 'ok', request, op === 'putObjects' ? writtenBytes(body as PutRequest) : 0);
          return reply.status(200).type('application/octet-stream').send(encodeMessage(answerType, answer));
        });
      const authenticated = (c: Caller, writing: boolean) => vss.authenticate(c.nodeId, c.credential, c.authorization, writing);

      route<{ storeId: string; key: string }, object>('getObject', VssMessages.GetObjectRequest, VssMessages.GetObjectResponse, async (c, req) => {
        const { nodeId } = await authenticated(c, false);
        return { value: await vss.stores.get(nodeId, req.storeId, req.key) };
      });
      route<PutRequest, object>('putObjects', VssMessages.PutObjectRequest, VssMessages.PutObjectResponse, async (c, req) => {
        await vss.putObjects(c.nodeId, c.credential, c.authorization, req);
        return {};
      });
      route<{ storeId: string; keyValue?: KeyValue }, object>('deleteObject', VssMessages.DeleteObjectRequest, VssMessages.DeleteObjectResponse, async (c, req) => {
        const { nodeId } = await authenticated(c, true);
        if (!req.keyValue) throw new VssError(VssErrorCode.INVALID_REQUEST, 'key_value is required');
        await vss.stores.delete(nodeId, req.storeId, req.keyValue);
        return {};
      });
      route<ListRequest, object>('listKeyVersions', VssMessages.ListKeyVersionsRequest, VssMessages.ListKeyVersionsResponse, async (c, req) => {
        const { nodeId } = await authenticated(c, false);
        return vss.stores.list(nodeId, req);
      });
    },
    { prefix: VSS_PATH },
  );
}

function decodeBody<T>(type: (typeof VssMessages)[keyof typeof VssMessages], request: FastifyRequest): T {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  try {
    return decodeMessage<T>(type, body);
  } catch {
    throw Object.assign(new Error('undecodable VSS request'), { statusCode: 400 });
  }
}

function sendError(reply: FastifyReply, err: VssError) {
  const message = err.code === VssErrorCode.INTERNAL ? 'internal error' : err.message;
  return reply
    .status(VSS_ERROR_STATUS[err.code])
    .type('application/octet-stream')
    .send(encodeMessage(VssMessages.ErrorResponse, { errorCode: err.code, message }));
}

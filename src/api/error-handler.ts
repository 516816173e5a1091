// The one place where failures become HTTP responses: domain errors (AppError), validation
// errors from the route schemas, and fastify's own body-parsing errors. Anything else is a bug,
// logged with its stack and answered as a 500 that reveals nothing.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { PATTERN_MEANINGS } from './schemas.ts';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

// The code each failed request was answered with, for the audit trail (api/audit-route.ts): the
// code the client got (invalid_request), never the error's own (FST_ERR_VALIDATION).
const answeredCodes = new WeakMap<FastifyRequest, ErrorCode>();
export const answeredErrorCode = (request: FastifyRequest) => answeredCodes.get(request);

export function sendError(reply: FastifyReply, request: FastifyRequest, code: ErrorCode, message: string, details?: Record<string, unknown>) {
  answeredCodes.set(request, code);
  return reply.status(ERROR_STATUS[code]).send({ error: { code, message, requestId: request.id, ...(details ? { details } : {}) } });
}

export function installErrorHandlers(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AppError) {
      // Every 429 says when to come back (RFC 9110 Retry-After), the sign-in limit's too, and so
      // does the 503 of a full password-hashing queue.
      const retryAfter = err.code === 'rate_limited' || err.code === 'quota_exceeded' || err.code === 'server_busy' ? err.details?.retryAfterSeconds : undefined;
      if (typeof retryAfter === 'number') reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
      return sendError(reply, request, err.code, err.message, err.details);
    }
    if (err.validation) {
      const problems = describeValidationErrors(err.validationContext ?? 'body', err.validation as AjvError[]);
      return sendError(reply, request, 'invalid_request', problems.join('; '), { problems });
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(reply, request, 'unsupported_media_type', `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`);
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(reply, request, 'payload_too_large', `the request body is larger than ${app.initialConfig.bodyLimit} bytes`);
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendError(reply, request, 'invalid_json', 'the body is empty but Content-Type says application/json');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendError(reply, request, 'invalid_json', `the body is not valid JSON: ${err.message}`);
    }
    if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
      return sendError(reply, request, 'invalid_json', `the body is not valid JSON: ${err.message}`);
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code: ErrorCode = status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : status === 429 ? 'rate_limited' : 'invalid_request';
      return sendError(reply, request, code, err.message);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, request, 'internal_error', 'an internal error occurred; quote the requestId when reporting it');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
  );
}

/**
 * One plain sentence per problem. A value that must be one of several alternatives (a union of
 * literals, or "an object or nothing") makes Ajv report every alternative it failed and then the
 * union itself; those become one sentence: `network must be regtest or testnet`.
 */
export function describeValidationErrors(context: string, errors: AjvError[]): string[] {
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const problems: string[] = [];
  for (const e of errors) {
    if (!unions.has(e.instancePath)) {
      problems.push(describeValidationError(context, e));
      continue;
    }
    if (e.keyword !== 'anyOf') continue;
    const alternatives = errors.filter((a) => a.instancePath === e.instancePath && a !== e);
    // Literals say it best; types only when no alternative is a literal.
    const literals = alternatives.filter((a) => a.keyword === 'const');
    const words = (literals.length > 0 ? literals : alternatives).map(alternativeWord);
    const where = e.instancePath.replace(/^\//, '').replaceAll('/', '.') || context;
    problems.push(words.every((w) => w !== undefined) && words.length > 0 ? `${where} must be ${orList([...new Set(words)] as string[])}` : describeValidationError(context, e));
  }
  return [...new Set(problems)];
}

/** How one failed alternative of a union reads: a literal as itself, a type by its name. */
function alternativeWord(e: AjvError): string | undefined {
  if (e.keyword === 'const') return typeof e.params.allowedValue === 'string' ? e.params.allowedValue : JSON.stringify(e.params.allowedValue);
  if (e.keyword === 'type') return e.params.type === 'null' ? 'nothing (null)' : e.params.type === 'object' ? 'an object' : `a ${e.params.type}`;
  return undefined;
}

const orList = (words: string[]) => (words.length <= 2 ? words.join(' or ') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);

export function describeValidationError(context: string, e: AjvError): string {
  const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const where = path || context;
  switch (e.keyword) {
    case 'required':
      return `${path ? `${path}.` : ''}${e.params.missingProperty} is required`;
    case 'additionalProperties':
      return `${where === context ? context : where} has an unknown field "${e.params.additionalProperty}"`;
    case 'type':
      return `${where} must be ${e.params.type === 'object' || e.params.type === 'array' ? `an ${e.params.type}` : `a ${e.params.type}`}`;
    case 'minLength':
      return e.params.limit === 1 ? `${where} must not be empty` : `${where} must be at least ${e.params.limit} characters`;
    case 'maxLength':
      return `${where} must be at most ${e.params.limit} characters`;
    case 'pattern':
      return `${where} ${PATTERN_MEANINGS[e.params.pattern as string] ?? `must match ${e.params.pattern}`}`;
    case 'minItems':
      return `${where} must have at least ${e.params.limit} item${e.params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${where} must have at most ${e.params.limit} items`;
    case 'enum':
      return `${where} must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${where} must be ${JSON.stringify(e.params.allowedValue)}`;
    case 'anyOf':
      return `${where} is not one of the accepted values`;
    case 'format':
      return `${where} must be a valid ${e.params.format}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

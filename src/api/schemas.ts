// Shared JSON schemas of the management API. They drive request validation, response
// serialisation, the TypeScript types and the OpenAPI document at once.
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.ts';
import { ADDRESS_PATTERN } from '../rln/unlock-body.ts';
import { ID_PATTERN } from '../domain/node-answer.ts';

// The Node and Build answers are defined once, in the domain (the list query renders them too).
export { BuildAnswer as Build, ID_PATTERN, NodeAnswer as Node } from '../domain/node-answer.ts';
// Printable text, not starting or ending with whitespace. Refused anywhere: C0 and C1 control
// characters (U+009B is the 8-bit terminal escape introducer: a name printed by a CLI or a log
// viewer must not drive the terminal) and the invisible bidirectional controls (U+202E and its
// kin reorder what follows, so a name could display as something else).
const CONTROLS = '\\x00-\\x1F\\x7F-\\x9F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
export const NAME_PATTERN = `^[^\\s${CONTROLS}]([^${CONTROLS}]*[^\\s${CONTROLS}])?$`;

// Whole seconds from 0 to 60 (GET /api/nodes/{id}?waitFor=&timeout=): a larger wait is refused,
// not quietly cut short.
export const WAIT_SECONDS_PATTERN = '^([0-9]|[1-5][0-9]|60)$';

// A page size from 1 to 200 (list routes' `limit`).
export const PAGE_LIMIT_PATTERN = '^([1-9]|[1-9][0-9]|1[0-9][0-9]|200)$';

/** Human explanations of the patterns above, used in 400 messages instead of the raw regex. */
export const PATTERN_MEANINGS: Record<string, string> = {
  [PAGE_LIMIT_PATTERN]: 'must be a whole number from 1 to 200',
  [WAIT_SECONDS_PATTERN]: 'must be a whole number of seconds from 0 to 60',
  [ID_PATTERN]: 'must be 32 lowercase hexadecimal characters',
  [NAME_PATTERN]: 'must not contain control characters or begin or end with whitespace',
  [ADDRESS_PATTERN]: 'must be visible characters, without spaces or control characters',
};

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'Error', description: 'The one error body of the management API.' },
);

export const Settings = Type.Object(
  {
    // One JSON type union rather than anyOf, so a bad value gets one clear message.
    webhookUrl: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 2048,
        description:
          'Where signed events about the node are POSTed (see the webhooks tag). An absolute http(s) URL of at most 2,048 characters, ' +
          'https only in production, without credentials; targets resolving to loopback, private, link-local, multicast or unspecified ' +
          'addresses are refused unless the operator allows private targets. An empty string or null removes it.',
      }),
    ),
    continuousState: Type.Optional(
      Type.Boolean({
        description:
          "Continuous state: the node's daemon writes every state change to the service's VSS server before acting on it (docs/VSS.md). " +
          "On by default where the node's release supports it; true where it does not is refused (409 `continuous_state_unsupported`). " +
          'A change applies from the next daemon start (start, upgrade, restart).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const NodeIdParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN, description: 'Node id: 32 lowercase hex characters.' }),
});
export type NodeIdParams = Static<typeof NodeIdParams>;

export const MessageBody = Type.Object({ message: Type.String() });

export const errorResponses = {
  400: Type.Ref(ErrorBody),
  401: Type.Ref(ErrorBody),
  404: Type.Ref(ErrorBody),
  409: Type.Ref(ErrorBody),
};

/** The paging parameters every list takes: `limit` (1-200) and the `cursor` its last page answered. */
export const pageParams = (what: string, defaultLimit: string) => ({
  limit: Type.Optional(Type.String({ pattern: PAGE_LIMIT_PATTERN, description: `${what} per page, 1-200; ${defaultLimit}.` })),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'The nextCursor of the previous page.' })),
});

/** A page's link to the next: null after the last page. */
export const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null after the last.' });

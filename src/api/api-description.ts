// What the OpenAPI document says about the API as a whole: its title, licence and the tags its
// operations are grouped by. Every tag an operation names must be declared here, with a sentence
// saying what it covers (test/client/openapi-lint.test.ts: operation-tag-defined, tag-description).
import type { OpenAPIV3_1 } from 'openapi-types';

export const API_INFO: OpenAPIV3_1.InfoObject = {
  title: 'RLN Cloud management API',
  version: '1.0.0',
  description:
    'Hosted RGB Lightning Nodes: create, list, inspect, start, stop, upgrade, configure, export logs, back up, destroy. ' +
    "Routes take `Authorization: Bearer <API token>` (the web UI's session routes excepted); every error has one body, `Error`. " +
    "Not described here: the VSS routes nodes write their channel state to (`POST /vss/<node id>/<credential>/<operation>`, LDK's " +
    'binary protobuf protocol with its own signed authentication); docs/VSS.md is their reference.',
  license: { name: 'MIT', identifier: 'MIT' },
};

export const API_TAGS: OpenAPIV3_1.TagObject[] = [
  {
    name: 'nodes',
    description:
      'RGB Lightning Node daemons: create, read, start, stop, upgrade, initialise, unlock and destroy. Every change of what runs is a ' +
      'durable build; a node answers RUNNING once its build completed.',
  },
  { name: 'account', description: "Your account's members and their roles, and invitations to join it." },
  { name: 'tokens', description: 'API tokens: the bearer credentials of this API and of the bearer node gateway.' },
  { name: 'logs', description: "Exports of a node's daemon output: gzip archives behind download URLs that expire." },
  {
    name: 'backups',
    description: "Backups of a node's wallet made by its daemon (encrypted with a password), and uploaded backup files to create a node from.",
  },
  { name: 'certificates', description: 'Client certificates for the mutual-TLS node gateway.' },
  { name: 'node tokens', description: "Customers' own node tokens: RLN Biscuits of a node's root key, checked and passed on by the bearer gateway." },
  {
    name: 'webhooks',
    description:
      "Signed POSTs of a node's events to its webhookUrl (see the nodeEvent webhook), the public key that checks them, and every delivery attempt.",
  },
  {
    name: 'events',
    description: "What happened to your nodes, as a timeline per node and as one Server-Sent Events stream of all of them, resumable with Last-Event-ID.",
  },
  { name: 'usage', description: 'Metered usage per calendar month (UTC): node time RUNNING and PAUSED, API and gateway calls (docs/USAGE.md).' },
  { name: 'audit', description: 'Your audit trail: security-relevant actions on your resources, who did them, from where, and how they ended.' },
  { name: 'sessions', description: 'Your web UI sessions: where you are signed in, and ending them.' },
  { name: 'notifications', description: 'Your notification emails (a node FAILED, a backup failed, the month\'s API calls at 80% and 100%): which kinds you receive.' },
  { name: 'session (web UI)', description: "The web UI's sign-in: a session cookie and a CSRF token in place of a bearer token." },
  { name: 'sign-up and password reset', description: 'Self-service sign-up (SIGNUP_MODE), email verification and password reset: public routes whose answers are the same for a known and an unknown address.' },
  { name: 'two factors', description: 'Second factors of web sign-in: an authenticator app (TOTP) with recovery codes, and the owner\'s rule that every member has one.' },
];

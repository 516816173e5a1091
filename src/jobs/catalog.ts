// Every durable job the service runs, declared in one place: its kind, attempts, payload (with its
// version) and singleton key. The code that enqueues a job and the handler that runs it both import
// its declaration from here, below them both, so neither owns it: the build job's enqueuers
// (nodes/builds/) and the rollout pass's (a build settling an upgrade) need not import the handler's
// area, and a reader sees every job, and what it carries, on one page. No job is declared elsewhere
// (src/architecture.test.ts), and every insertJob/insertJobs enqueues one of these.
//
// The handlers (JobDefinition: lease, backoff, handle, onGiveUp) stay beside the work they do;
// a payload's schema changes here, with a new version `v`, never in place.
import { Type } from '@sinclair/typebox';
import { declareJob, type JobDeclaration } from './job-declaration.ts';

/** Carries out one build of a node (nodes/builds/build-job.ts). */
export const BUILD_JOB = declareJob({
  kind: 'node.build',
  maxAttempts: 3,
  payload: Type.Object({ v: Type.Literal(1), nodeId: Type.String(), buildNumber: Type.Number() }),
  singletonKey: (p) => `build:${p.nodeId}:${p.buildNumber}`,
});
export type BuildJobPayload = ReturnType<typeof BUILD_JOB.parse>;

/** Upgrades carried out by one rollout upgrades job; a pass starting more enqueues several. */
export const UPGRADE_BATCH_SIZE = 50;

/** Carries out a batch of a rollout's upgrades together (nodes/rollout/upgrades-job.ts). */
export const ROLLOUT_UPGRADES_JOB = declareJob({
  kind: 'node.rollout-upgrades',
  maxAttempts: 3,
  payload: Type.Object({
    v: Type.Literal(1),
    version: Type.String(),
    builds: Type.Array(Type.Object({ nodeId: Type.String(), buildNumber: Type.Number() }), { minItems: 1, maxItems: UPGRADE_BATCH_SIZE }),
  }),
  // A build belongs to one batch: its first build names it.
  singletonKey: (p) => `rollout-upgrades:${p.builds[0]!.nodeId}:${p.builds[0]!.buildNumber}`,
});
export type RolloutUpgradesPayload = ReturnType<typeof ROLLOUT_UPGRADES_JOB.parse>;

/** Runs a pass of a release's rollout (nodes/rollout/pass-job.ts; asked for by nodes/rollout/enqueue-pass.ts). */
export const ROLLOUT_PASS_JOB = declareJob({
  kind: 'release.rollout-pass',
  maxAttempts: 5,
  /** `askedBy` names what asked for the pass (a settled build, a publish, an earlier pass): one job per request. */
  payload: Type.Object({ v: Type.Literal(1), version: Type.String(), askedBy: Type.String() }),
  singletonKey: (p) => `rollout-pass:${p.version}:${p.askedBy}`,
});
export type RolloutPassPayload = ReturnType<typeof ROLLOUT_PASS_JOB.parse>;

/**
 * Runs a pass of the authentication rollout (nodes/rollout/authentication-pass-job.ts; asked for by
 * a start, a resume, a settled restart build, or a pass left waiting on busy nodes).
 */
export const AUTHENTICATION_ROLLOUT_PASS_JOB = declareJob({
  kind: 'authentication.rollout-pass',
  maxAttempts: 5,
  /** `askedBy` names what asked for the pass: one job per request, coalesced by the pass. */
  payload: Type.Object({ v: Type.Literal(1), askedBy: Type.String() }),
  singletonKey: (p) => `authentication-rollout-pass:${p.askedBy}`,
});
export type AuthenticationRolloutPassPayload = ReturnType<typeof AUTHENTICATION_ROLLOUT_PASS_JOB.parse>;

/** Unlocks a node with automatic unlock after its daemon (re)started (nodes/unlock/auto-unlock-job.ts). */
export const AUTO_UNLOCK_JOB = declareJob({
  kind: 'node.auto-unlock',
  // With the job's backoff, about five minutes: long enough for a restarted pod to be scheduled
  // and come up; after that the node waits for a manual unlock or its next start.
  maxAttempts: 10,
  payload: Type.Object({ v: Type.Literal(1), nodeId: Type.String() }),
  // One pending unlock per node: several reports of one restart (every replica records what its
  // runtime saw) unlock it once.
  singletonKey: (p) => `auto-unlock:${p.nodeId}`,
});
export type AutoUnlockJobPayload = ReturnType<typeof AUTO_UNLOCK_JOB.parse>;

/** Builds one log export (logs/export-job.ts). */
export const LOG_EXPORT_JOB = declareJob({
  kind: 'logs.export',
  maxAttempts: 3,
  payload: Type.Object({ v: Type.Literal(1), taskId: Type.String() }),
  singletonKey: (p) => `log-export:${p.taskId}`,
});
export type LogExportJobPayload = ReturnType<typeof LOG_EXPORT_JOB.parse>;

/** Sends one outbox message over SMTP (mail/send-email-job.ts). */
export const SEND_EMAIL_JOB = declareJob({
  kind: 'email.send',
  // With the job's backoff, about a day: an SMTP server down for the night still gets the message.
  maxAttempts: 12,
  payload: Type.Object({ v: Type.Literal(1), messageId: Type.String() }),
  singletonKey: (p) => `email:${p.messageId}`,
});
export type SendEmailJobPayload = ReturnType<typeof SEND_EMAIL_JOB.parse>;

/**
 * Writes the notice of a node event (notifications/node-event-job.ts). Enqueued by the database
 * itself, migration 0036's trigger, which writes this kind, payload, key and attempts in SQL
 * (catalog.test.ts holds the two to each other).
 */
export const NODE_EVENT_NOTICE_JOB = declareJob({
  kind: 'notification.node-event',
  maxAttempts: 5,
  payload: Type.Object({ v: Type.Literal(1), eventId: Type.Integer() }),
  singletonKey: (p) => `notification:node-event:${p.eventId}`,
});
export type NodeEventNoticePayload = ReturnType<typeof NODE_EVENT_NOTICE_JOB.parse>;

/** Answers "email me a link" (signup/link-request-job.ts). */
export const LINK_REQUEST_JOB = declareJob({
  kind: 'signup.link-request',
  maxAttempts: 5,
  payload: Type.Object({ v: Type.Literal(1), purpose: Type.Union([Type.Literal('verify'), Type.Literal('reset')]), email: Type.String(), sourceIp: Type.String() }),
  // Two requests for one address while the first waits: one link answers both.
  singletonKey: (p) => `link-request:${p.purpose}:${p.email}`,
});
export type LinkRequestJobPayload = ReturnType<typeof LINK_REQUEST_JOB.parse>;

/** The whole catalog: every kind a job row may have. */
export const JOB_CATALOG: readonly JobDeclaration<unknown>[] = [
  BUILD_JOB,
  ROLLOUT_UPGRADES_JOB,
  ROLLOUT_PASS_JOB,
  AUTO_UNLOCK_JOB,
  LOG_EXPORT_JOB,
  SEND_EMAIL_JOB,
  NODE_EVENT_NOTICE_JOB,
  LINK_REQUEST_JOB,
];

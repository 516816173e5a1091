// The durable job that answers "email me a link" (a verification resend, a password reset request).
// The request itself only counts its limits and enqueues this job, the same single write for an
// address with an account and one without, so neither the answer nor its timing tells them apart;
// the job looks the address up and writes the link and its email, or nothing.
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import type { SignupService } from './service.ts';
import { LINK_REQUEST_JOB, type LinkRequestJobPayload } from '../jobs/catalog.ts';

export function linkRequestJob(deps: { signup: Pick<SignupService, 'answerLinkRequest'> }): JobDefinition<LinkRequestJobPayload> {
  return {
    ...LINK_REQUEST_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 60_000),
    handle: (p) => deps.signup.answerLinkRequest(p.purpose, p.email, p.sourceIp),
  };
}

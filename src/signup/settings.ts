// Configuration of self-service sign-up (signup/), read by config.ts with the rest of the environment.
import { integer, matching, oneOf } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export const SIGNUP_MODES = ['open', 'approval', 'invite-only', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

export interface SignupConfig {
  mode: SignupMode;
  /** The plan a signed-up account starts on. */
  plan: string;
  /** Sign-ups per hour across the whole service (every replica). */
  maxPerHour: number;
  /** Sign-ups per hour from one client address. */
  maxPerAddressPerHour: number;
}

export const SIGNUP_VARIABLES = {
  // invite-only is what the service did before sign-up existed: the operator creates owners and
  // they invite their members; nothing is open to strangers unless the operator says so.
  mode: variable('SIGNUP_MODE', oneOf(SIGNUP_MODES), {
    default: 'invite-only',
    doc: '`open`: anyone signs up (`POST /api/signup`, `/sign-up`) and verifies their email; `approval`: the same, and the account waits for `rln-cloud signup approve`; `invite-only`: accounts only from `rln-cloud user create`, members by invitation; `closed`: no sign-up (the operator still creates accounts, owners still invite)',
  }),
  plan: variable('SIGNUP_PLAN', matching(/^[a-z][a-z0-9-]{0,31}$/, 'be a plan name'), {
    default: 'starter',
    doc: 'the plan a signed-up account starts on (`rln-cloud plan list`)',
  }),
  // A burst of sign-ups beyond this is a script: the limit bounds the email it can make the service
  // send, and what an operator must clean up.
  maxPerHour: variable('SIGNUP_MAX_PER_HOUR', integer(1, 1_000_000), {
    default: '100',
    doc: 'sign-ups per hour across the service (every replica); past it `POST /api/signup` answers 429 `rate_limited` with `Retry-After`',
  }),
  maxPerAddressPerHour: variable('SIGNUP_MAX_PER_ADDRESS_PER_HOUR', integer(1, 1_000_000), {
    default: '5',
    doc: 'sign-ups per hour from one client address (see `TRUSTED_PROXIES`); also bounds verification resends and password reset requests from it',
  }),
};

export function readSignupConfig(env: Env, problems: string[]): SignupConfig {
  const values = readEnv(SIGNUP_VARIABLES, env, problems);
  return { mode: values.mode, plan: values.plan, maxPerHour: values.maxPerHour, maxPerAddressPerHour: values.maxPerAddressPerHour };
}

// The operator commands. The CLI runs them against the database directly, or, when a server
// holds the embedded database open, asks that server to run them over the admin channel: the
// same functions either way.
import type { AccountService, TokenScopeInput } from '../accounts/service.ts';
import type { LimitInput, PlanService } from '../accounts/plans.ts';
import type { ReleaseService } from '../releases/service.ts';
import type { AuthenticationRolloutService } from '../releases/authentication-rollout.ts';
import type { WebhookKeyring } from '../webhooks/signing-keys.ts';
import type { CertificateService } from '../pki/client-certificates.ts';
import type { UnlockSealKeys } from '../secrets/unlock-seal-keys.ts';
import { parseDurationMs } from '../env/formats.ts';
import { AppError } from '../errors.ts';
import type { AuditEntry, AuditLog } from '../audit/audit-log.ts';
import type { UsageService } from '../usage/service.ts';
import { MONTH_PATTERN } from '../usage/node-time.ts';
import type { SignupService } from '../signup/service.ts';
import type { Outbox } from '../mail/outbox.ts';
import type { TwoFactor } from '../accounts/two-factor.ts';

/** What the operator did, in the trail of the user it concerns. */
const byOperator = (entry: Omit<AuditEntry, 'actor' | 'sourceIp' | 'outcome'>): AuditEntry => ({ ...entry, actor: 'operator', sourceIp: null, outcome: 'succeeded' });

export interface OperatorContext {
  audit: AuditLog;
  accounts: AccountService;
  /** Accounts waiting for approval (SIGNUP_MODE=approval). */
  signup: Pick<SignupService, 'listAwaiting' | 'approve' | 'reject'>;
  /** Second factors: the operator's reset for a person who lost their authenticator and recovery codes. */
  twoFactor: Pick<TwoFactor, 'reset'>;
  /** The email outbox: where messages stay when no SMTP_URL is set. */
  outbox: Outbox;
  plans: PlanService;
  releases: ReleaseService;
  /** Restarts, in batches, the nodes whose daemon still runs without RLN's authentication. */
  authenticationRollout: AuthenticationRolloutService;
  webhookKeys: WebhookKeyring;
  certificates: CertificateService;
  usage: Pick<UsageService, 'report' | 'hasBegun'>;
  /** Only where the command needs it: the CLI loads the key file for the unlock-seal-key commands alone. */
  unlockSealKeys?: UnlockSealKeys;
}

export type OperatorArgs = { positional: string[]; options: Record<string, string | true> };

const required = (a: OperatorArgs, i: number, what: string) => {
  const v = a.positional[i];
  if (!v) throw new AppError('invalid_request', `missing ${what}`);
  return v;
};
const option = (a: OperatorArgs, name: string) => {
  const v = a.options[name];
  if (v === true) throw new AppError('invalid_request', `--${name} needs a value`);
  return v;
};

const wholeNumber = (a: OperatorArgs, name: string, min: number) => {
  const v = option(a, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,6}$/.test(v) || Number(v) < min) throw new AppError('invalid_request', `--${name} must be a whole number of at least ${min}`);
  return Number(v);
};

/** --read-only, --node <id> (repeated, or ids separated by commas), --access: checked by AccountService. */
const tokenScope = (a: OperatorArgs): TokenScopeInput => {
  const nodes = option(a, 'node');
  const access = option(a, 'access');
  return {
    readOnly: a.options['read-only'] === true ? true : undefined,
    nodeIds: nodes === undefined ? undefined : nodes.split(',').map((id) => id.trim().toLowerCase()).filter((id) => id !== ''),
    access: access as TokenScopeInput['access'],
  };
};

/** --nodes 3, --api-calls-per-month unlimited: a limit, or undefined when the option is left out. */
const limitOption = (a: OperatorArgs, name: string): LimitInput | undefined => {
  const v = option(a, name);
  if (v === undefined) return undefined;
  if (v === 'unlimited') return v;
  if (!/^\d{1,15}$/.test(v)) throw new AppError('invalid_request', `--${name} must be a whole number or unlimited`);
  return Number(v);
};

const booleanOption = (a: OperatorArgs, name: string) => {
  const v = option(a, name);
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new AppError('invalid_request', `--${name} must be true or false`);
  return v === 'true';
};

const sealKeys = (ctx: OperatorContext) => {
  if (!ctx.unlockSealKeys) throw new AppError('internal_error', 'the unlock seal key file was not loaded for this command');
  return ctx.unlockSealKeys;
};

export const operatorCommands: Record<string, (ctx: OperatorContext, a: OperatorArgs) => Promise<object>> = {
  'user create': (ctx, a) =>
    ctx.accounts.createUser({ email: required(a, 0, '<email>'), plan: option(a, 'plan'), password: option(a, 'password') }),
  'user set-password': (ctx, a) => ctx.accounts.setPassword(required(a, 0, '<email>'), required(a, 1, '<password>')),
  // Audited in the person's account trail (two_factor.reset); they sign in with their password alone
  // next time, or are made to enrol again where their account requires two factors.
  'user reset-2fa': (ctx, a) => ctx.twoFactor.reset(required(a, 0, '<email>')),
  'signup list': async (ctx) => ({ awaiting: await ctx.signup.listAwaiting() }),
  'signup approve': async (ctx, a) => {
    const approved = await ctx.signup.approve(required(a, 0, '<email>'));
    await ctx.audit.record(byOperator({ userId: approved.accountId, action: 'signup.approved', target: approved.email }));
    return approved;
  },
  'signup reject': async (ctx, a) => {
    const rejected = await ctx.signup.reject(required(a, 0, '<email>'));
    // In no account's trail: the account is gone.
    await ctx.audit.record(byOperator({ userId: null, action: 'signup.rejected', target: rejected.email, details: { accountId: rejected.accountId } }));
    return rejected;
  },
  'mail list': async (ctx, a) => ctx.outbox.list({ to: option(a, 'to'), limit: wholeNumber(a, 'limit', 1) ?? 20 }),
  'mail show': (ctx, a) => ctx.outbox.show(required(a, 0, '<message-id>')),
  'plan list': async (ctx) => ({ plans: await ctx.plans.list() }),
  'plan set': async (ctx, a) => {
    const name = required(a, 0, '<name>');
    const set = await ctx.plans.set(name, {
      maxNodes: limitOption(a, 'nodes'),
      apiCallsPerMonth: limitOption(a, 'api-calls-per-month'),
      maxUsers: limitOption(a, 'users'),
      autoUpgrade: booleanOption(a, 'auto-upgrade'),
    });
    await ctx.audit.record(byOperator({ userId: null, action: set.created ? 'plan.created' : 'plan.changed', target: name, details: { ...set.plan } }));
    return set.plan;
  },
  'account set-plan': async (ctx, a) => {
    const changed = await ctx.plans.setAccountPlan(required(a, 0, '<email>'), required(a, 1, '<plan>'));
    await ctx.audit.record(byOperator({ userId: changed.accountId, action: 'account.plan_changed', target: changed.accountId, details: { from: changed.previousPlan, to: changed.plan } }));
    return changed;
  },
  'token create': async (ctx, a) => {
    const days = option(a, 'expires-in-days');
    if (days !== undefined && !/^\d+$/.test(days)) throw new AppError('invalid_request', '--expires-in-days must be a whole number');
    const created = await ctx.accounts.createToken(required(a, 0, '<email>'), option(a, 'name'), days ? Number(days) : undefined, tokenScope(a));
    await ctx.audit.record(byOperator({ userId: created.accountId, action: 'token.created', target: created.id }));
    return created;
  },
  'token revoke': async (ctx, a) => {
    const revoked = await ctx.accounts.revokeToken(required(a, 0, '<token-id>'));
    await ctx.audit.record(byOperator({ userId: revoked.userId, action: 'token.revoked', target: revoked.id }));
    return revoked;
  },
  'token list': async (ctx, a) => ({ tokens: await ctx.accounts.listTokens(required(a, 0, '<email>')) }),
  'release publish': async (ctx, a) => {
    const published = await ctx.releases.publish(required(a, 0, '<version>'), {
      concurrency: wholeNumber(a, 'concurrency', 1),
      failureBudget: wholeNumber(a, 'failure-budget', 0),
    });
    await ctx.audit.record(byOperator({ userId: null, action: 'release.published', target: published.version }));
    return published;
  },
  'release status': (ctx, a) => ctx.releases.status(required(a, 0, '<version>')),
  'release resume': async (ctx, a) => {
    return ctx.releases.resume(required(a, 0, '<version>'), wholeNumber(a, 'failure-budget', 0));
  },
  'release list': async (ctx) => ({ releases: await ctx.releases.list() }),
  'authentication rollout': async (ctx, a) => {
    const started = await ctx.authenticationRollout.start({
      concurrency: wholeNumber(a, 'concurrency', 1),
      failureBudget: wholeNumber(a, 'failure-budget', 0),
    });
    await ctx.audit.record(byOperator({ userId: null, action: 'authentication.rollout_started', target: 'nodes', details: { ...started } }));
    return started;
  },
  'authentication status': (ctx) => ctx.authenticationRollout.status(),
  'authentication resume': (ctx, a) => ctx.authenticationRollout.resume(wholeNumber(a, 'failure-budget', 0)),
  // Works on the keyring file itself; a running service picks the new key up within a second.
  'webhook-key rotate': async (ctx, a) => {
    const overlap = option(a, 'overlap');
    const overlapMs = overlap === undefined ? undefined : parseDurationMs(overlap);
    if (overlap !== undefined && overlapMs === undefined) throw new AppError('invalid_request', '--overlap must be a duration like 24h, 30m or 0');
    return ctx.webhookKeys.rotate(overlapMs);
  },
  // Rewrites the key file and re-seals every sealed password in the database with the new key; a
  // running service reads the new key when it next seals or opens (no restart).
  'unlock-seal-key rotate': (ctx) => sealKeys(ctx).rotate(),
  // For a key file the service cannot write (a Kubernetes Secret): the operator puts the new key
  // first in it, runs this, then removes the old key.
  'unlock-seal-key reseal': (ctx) => sealKeys(ctx).reseal(),
  'audit list': async (ctx, a) => {
    const email = option(a, 'user');
    // A member's email names their account's trail, which records which member did what.
    return ctx.audit.list({ userId: email === undefined ? undefined : await ctx.accounts.accountIdOf(email), limit: wholeNumber(a, 'limit', 1) ?? 50 });
  },
  // A row per account and node (node '' holds an account's API calls about no node); the CLI
  // prints it as CSV with --format csv (cli/usage-csv.ts).
  'usage report': async (ctx, a) => {
    const month = option(a, 'month');
    const format = option(a, 'format');
    // Checked here, before any work: an unknown format must not fall back to text silently.
    if (format !== undefined && format !== 'csv' && format !== 'json') throw new AppError('invalid_request', `--format ${format} is not a report format: csv or json (text when left out)`);
    if (month === undefined) throw new AppError('invalid_request', '--month YYYY-MM is required (a calendar month, UTC)');
    if (!MONTH_PATTERN.test(month)) throw new AppError('invalid_request', `--month ${month} is not a calendar month: YYYY-MM, with a month from 01 to 12`);
    if (!ctx.usage.hasBegun(month)) throw new AppError('invalid_request', `${month} has not begun`);
    return { month, ...(await ctx.usage.report(month)) };
  },
  // The files are written by the CLI process (main.ts), not here: this may run in the server.
  'cert issue': async (ctx, a) => {
    const issued = await ctx.certificates.issueForOperator(required(a, 0, '<node-id>'));
    await ctx.audit.recordOnNode(required(a, 0, '<node-id>'), { action: 'certificate.issued', actor: 'operator', sourceIp: null, outcome: 'succeeded', details: { serial: issued.serial } });
    return issued;
  },
  'cert list': async (ctx, a) => ({ certificates: await ctx.certificates.listForOperator(required(a, 0, '<node-id>')) }),
  'cert revoke': async (ctx, a) => {
    const revoked = await ctx.certificates.revokeForOperator(required(a, 0, '<serial>'));
    await ctx.audit.recordOnNode(revoked.nodeId, { action: 'certificate.revoked', actor: 'operator', sourceIp: null, outcome: 'succeeded', details: { serial: revoked.serial } });
    return revoked;
  },
};

// Second factors: TOTP (RFC 6238, the otpauth library) with ten one-time recovery codes, and an
// account owner's rule that every member has one. A code is accepted once: the time step of the
// last code accepted is stored and no code of that step or an earlier one passes again. Wrong
// codes count in the sign-in failure table (per person), so guessing 10^6 codes takes years.
import { createHash, randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import type { Database } from '../db/database.ts';
import {
  accountRequiresTwoFactors,
  countRecoveryCodesLeft,
  deleteTotp,
  findTotp,
  putUnconfirmedTotp,
  replaceRecoveryCodes,
  setAccountRequiresTwoFactors,
  useRecoveryCode,
  useTotpStep,
} from '../db/two-factor.ts';
import { clearSignInFailures, countSignInFailures, recordSignInFailure } from '../db/web-sessions.ts';
import { findUserByEmail } from '../db/users.ts';
import { AppError } from '../errors.ts';
import type { AuditLog, AuditAction } from '../audit/audit-log.ts';
import { normalEmail } from '../domain/email.ts';

const ISSUER = 'RLN Cloud';
const PERIOD_S = 30;
// One step either side: a phone's clock a little off, or a code typed as it changed.
const WINDOW = 1;
const RECOVERY_CODES = 10;
// Wrong codes per person in the failure window before they are refused for its rest.
const MAX_CODE_FAILURES = 5;
const FAILURE_WINDOW_S = 15 * 60;
// No 0/O, 1/l/i: read off a printout.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A factor as a person sends it: a code from their authenticator, or one of their recovery codes. */
export interface FactorInput {
  code?: string;
  recoveryCode?: string;
}

export interface Person {
  id: string;
  email: string;
  accountId: string;
}

const hashRecoveryCode = (code: string) => createHash('sha256').update(code.toLowerCase().replace(/[^a-z0-9]/g, '')).digest('hex');

function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

const totpOf = (secret: string, email: string) =>
  new OTPAuth.TOTP({ issuer: ISSUER, label: email, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret: OTPAuth.Secret.fromBase32(secret) });

export class TwoFactor {
  constructor(private readonly opts: { db: Database; audit?: Pick<AuditLog, 'record'> }) {}

  private async audit(person: Person, action: AuditAction, sourceIp: string | null, outcome: 'succeeded' | 'failed', details?: Record<string, unknown>) {
    await this.opts.audit?.record({
      userId: person.accountId,
      actor: sourceIp === null ? 'operator' : 'session',
      actorUserId: sourceIp === null ? null : person.id,
      actorEmail: sourceIp === null ? null : person.email,
      sourceIp,
      action,
      target: person.email,
      outcome,
      ...(details ? { details } : {}),
    });
  }

  /** Whether the person has a confirmed factor. */
  async hasFactor(userId: string): Promise<boolean> {
    return (await findTotp(this.opts.db, userId))?.confirmed_at != null;
  }

  accountRequires(accountId: string): Promise<boolean> {
    return accountRequiresTwoFactors(this.opts.db, accountId);
  }

  async status(person: Person) {
    const totp = await findTotp(this.opts.db, person.id);
    return {
      totp: totp?.confirmed_at != null,
      recoveryCodesLeft: totp?.confirmed_at ? await countRecoveryCodesLeft(this.opts.db, person.id) : 0,
      requiredByAccount: await this.accountRequires(person.accountId),
    };
  }

  /** A new secret to enrol, not in force until a first code confirms it; refused while one is confirmed. */
  async beginTotp(person: Person) {
    const secret = new OTPAuth.Secret({ size: 20 }).base32;
    if (!(await putUnconfirmedTotp(this.opts.db, person.id, secret))) {
      throw new AppError('invalid_state', 'you have an authenticator already; turn it off first to enrol another');
    }
    const uri = totpOf(secret, person.email).toString();
    return { secret, otpauthUri: uri, qrCodeSvg: await QRCode.toString(uri, { type: 'svg', margin: 1 }) };
  }

  /** Confirms the enrolment with a first code; returns the ten recovery codes, shown this once. */
  async confirmTotp(person: Person, code: string, sourceIp: string) {
    const totp = await findTotp(this.opts.db, person.id);
    if (!totp) throw new AppError('invalid_state', 'start the enrolment first (POST /api/me/2fa/totp)');
    if (totp.confirmed_at) throw new AppError('invalid_state', 'your authenticator is enrolled already');
    await this.checkNotThrottled(person);
    if (!(await this.acceptCode(person, totp.secret, code, true))) {
      await this.failed(person, sourceIp, 'two_factor.enabled');
      throw new AppError('wrong_second_factor', 'the code is wrong or was used already; type the one your authenticator shows now');
    }
    await clearSignInFailures(this.opts.db, this.failureKey(person));
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await replaceRecoveryCodes(this.opts.db, person.id, codes.map(hashRecoveryCode));
    await this.audit(person, 'two_factor.enabled', sourceIp, 'succeeded', { factor: 'totp' });
    return { recoveryCodes: codes };
  }

  /**
   * Checks a current factor of the person (a code, or a recovery code which is then spent);
   * throws wrong_second_factor (counted, audited) or rate_limited.
   */
  async check(person: Person, input: FactorInput, sourceIp: string, purpose: 'sign_in' | 'disable') {
    const totp = await findTotp(this.opts.db, person.id);
    if (!totp?.confirmed_at) throw new AppError('invalid_state', 'you have no second factor');
    if ((input.code === undefined) === (input.recoveryCode === undefined)) {
      throw new AppError('invalid_request', 'send either code (from your authenticator) or recoveryCode');
    }
    await this.checkNotThrottled(person);
    const ok =
      input.code !== undefined
        ? await this.acceptCode(person, totp.secret, input.code, false)
        : await useRecoveryCode(this.opts.db, person.id, hashRecoveryCode(input.recoveryCode!));
    if (!ok) {
      await this.failed(person, sourceIp, 'two_factor.checked', purpose);
      throw new AppError('wrong_second_factor', 'the code is wrong or was used already');
    }
    await clearSignInFailures(this.opts.db, this.failureKey(person));
    if (input.recoveryCode !== undefined) {
      await this.audit(person, 'two_factor.recovery_code_used', sourceIp, 'succeeded', { left: await countRecoveryCodesLeft(this.opts.db, person.id) });
    }
    await this.audit(person, 'two_factor.checked', sourceIp, 'succeeded', { purpose, factor: input.code !== undefined ? 'totp' : 'recovery_code' });
  }

  /** Turns the person's factor off after a current factor; refused where the account requires one. */
  async disable(person: Person, input: FactorInput, sourceIp: string) {
    if (await this.accountRequires(person.accountId)) {
      throw new AppError('invalid_state', 'your account requires two factors: its owner must lift the rule before you can turn yours off');
    }
    await this.check(person, input, sourceIp, 'disable');
    await deleteTotp(this.opts.db, person.id);
    await this.audit(person, 'two_factor.disabled', sourceIp, 'succeeded');
  }

  /** The owner's rule; the owner turning it on must have a factor themselves (or they would be asked to enrol at once). */
  async setAccountRule(owner: Person, required: boolean, sourceIp: string) {
    if (required && !(await this.hasFactor(owner.id))) {
      throw new AppError('invalid_state', 'enrol an authenticator yourself before requiring two factors of every member');
    }
    await setAccountRequiresTwoFactors(this.opts.db, owner.accountId, required);
    await this.audit(owner, 'account.two_factors_required', sourceIp, 'succeeded', { required });
    return { required };
  }

  /** The operator's reset (`rln-cloud user reset-2fa <email>`): the person's factor and recovery codes go. */
  async reset(emailRaw: string) {
    const email = normalEmail(emailRaw);
    const user = await findUserByEmail(this.opts.db, email);
    if (!user) throw new AppError('user_not_found', `no user with email ${email}`);
    const had = await this.hasFactor(user.id);
    await deleteTotp(this.opts.db, user.id);
    await clearSignInFailures(this.opts.db, this.failureKey({ id: user.id }));
    await this.audit({ id: user.id, email, accountId: user.account_id }, 'two_factor.reset', null, 'succeeded', { hadFactor: had });
    return { email, reset: true, hadFactor: had };
  }

  private failureKey(person: { id: string }) {
    return `second-factor:${person.id}`;
  }

  private async checkNotThrottled(person: Person) {
    const { failures, retryAfterSeconds } = await countSignInFailures(this.opts.db, this.failureKey(person), FAILURE_WINDOW_S);
    if (failures >= MAX_CODE_FAILURES) {
      throw new AppError('rate_limited', `too many wrong codes; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, { retryAfterSeconds });
    }
  }

  private async failed(person: Person, sourceIp: string, action: AuditAction, purpose?: string) {
    await recordSignInFailure(this.opts.db, this.failureKey(person), FAILURE_WINDOW_S);
    await this.audit(person, action, sourceIp, 'failed', purpose ? { purpose } : undefined);
  }

  /** A code valid now (one step either side) whose step is later than the last accepted; records it. */
  private async acceptCode(person: Person, secret: string, code: string, confirm: boolean) {
    const token = code.replace(/\s/g, '');
    if (!/^\d{6}$/.test(token)) return false;
    const now = Date.now();
    const delta = totpOf(secret, person.email).validate({ token, timestamp: now, window: WINDOW });
    if (delta === null) return false;
    const step = Math.floor(now / 1000 / PERIOD_S) + delta;
    return useTotpStep(this.opts.db, person.id, step, confirm);
  }
}

// Second factors: TOTP (RFC 6238, the otpauth library) with ten one-time recovery codes, passkeys
// (accounts/passkeys.ts), and an account owner's rule that every member has one. A code is accepted once: the time step of the
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
import { findUserByEmail, findUserById } from '../db/users.ts';
import { AppError } from '../errors.ts';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { deleteUserPasskeys } from '../db/passkeys.ts';
import type { Passkeys } from './passkeys.ts';
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

/**
 * A factor as a person sends it: a code from their authenticator, one of their recovery codes, or
 * a passkey's answer to a challenge (POST /api/me/2fa/passkey-options) handed to this session.
 */
export interface FactorInput {
  code?: string;
  recoveryCode?: string;
  passkey?: AuthenticationResponseJSON;
}

/** Where a factor comes from: the client's address, and the SHA-256 of its session cookie (which a passkey challenge is tied to). */
export interface FactorSource {
  sourceIp: string;
  browserKey?: string;
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
  constructor(private readonly opts: { db: Database; audit?: Pick<AuditLog, 'record'>; passkeys?: Passkeys }) {}

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

  /** Whether the person has a confirmed factor: an authenticator, or a passkey. */
  async hasFactor(userId: string): Promise<boolean> {
    return (await this.hasTotp(userId)) || (await this.passkeyCount(userId)) > 0;
  }

  private async hasTotp(userId: string) {
    return (await findTotp(this.opts.db, userId))?.confirmed_at != null;
  }

  private passkeyCount(userId: string) {
    return this.opts.passkeys?.count(userId) ?? Promise.resolve(0);
  }

  accountRequires(accountId: string): Promise<boolean> {
    return accountRequiresTwoFactors(this.opts.db, accountId);
  }

  async status(person: Person) {
    const totp = await findTotp(this.opts.db, person.id);
    return {
      password: Boolean((await findUserById(this.opts.db, person.id))?.password_hash),
      totp: totp?.confirmed_at != null,
      recoveryCodesLeft: totp?.confirmed_at ? await countRecoveryCodesLeft(this.opts.db, person.id) : 0,
      passkeys: await this.passkeyCount(person.id),
      passkeysAvailable: this.opts.passkeys?.available ?? false,
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
   * Checks a current factor of the person (a code, a recovery code which is then spent, or a
   * passkey's answer to a challenge handed to this session); throws wrong_second_factor (counted,
   * audited) or rate_limited.
   */
  async check(person: Person, input: FactorInput, from: FactorSource, purpose: 'sign_in' | 'disable' | 'confirm') {
    const sent = [input.code, input.recoveryCode, input.passkey].filter((f) => f !== undefined).length;
    if (sent !== 1) throw new AppError('invalid_request', 'send one of code (from your authenticator), recoveryCode or passkey');
    const totp = await findTotp(this.opts.db, person.id);
    if (input.passkey === undefined && !totp?.confirmed_at) {
      throw new AppError('invalid_state', (await this.hasFactor(person.id)) ? 'you have no authenticator app: use your passkey' : 'you have no second factor');
    }
    await this.checkNotThrottled(person);
    const factor = input.code !== undefined ? 'totp' : input.recoveryCode !== undefined ? 'recovery_code' : 'passkey';
    let refusal: string | undefined;
    if (input.passkey !== undefined) {
      if (!this.opts.passkeys) throw new AppError('invalid_state', 'passkeys are not offered here');
      if (!from.browserKey) throw new AppError('invalid_request', 'a passkey confirms only from a web session: its challenge is tied to the session');
      const checked = await this.opts.passkeys.checkAssertion(person.id, from.browserKey, input.passkey);
      if (!checked.ok) refusal = checked.reason;
    } else {
      const ok =
        input.code !== undefined
          ? await this.acceptCode(person, totp!.secret, input.code, false)
          : await useRecoveryCode(this.opts.db, person.id, hashRecoveryCode(input.recoveryCode!));
      if (!ok) refusal = 'wrong or used code';
    }
    if (refusal !== undefined) {
      await this.failed(person, from.sourceIp, 'two_factor.checked', { purpose, factor, ...(factor === 'passkey' ? { reason: refusal } : {}) });
      throw new AppError(
        'wrong_second_factor',
        factor === 'passkey' ? 'the passkey was refused: ask for a new challenge and try again with one of your passkeys' : 'the code is wrong or was used already',
      );
    }
    await clearSignInFailures(this.opts.db, this.failureKey(person));
    if (input.recoveryCode !== undefined) {
      await this.audit(person, 'two_factor.recovery_code_used', from.sourceIp, 'succeeded', { left: await countRecoveryCodesLeft(this.opts.db, person.id) });
    }
    await this.audit(person, 'two_factor.checked', from.sourceIp, 'succeeded', { purpose, factor });
  }

  /**
   * Refuses to take away the person's last factor while their account requires two: the owner
   * must lift the rule first (or they enrol another factor before removing this one).
   */
  private async refuseLastFactorIfRequired(person: Person, remaining: number) {
    if (remaining === 0 && (await this.accountRequires(person.accountId))) {
      throw new AppError('invalid_state', 'your account requires two factors and this is your last: enrol another first, or ask the owner to lift the rule');
    }
  }

  /** Turns the person's authenticator off after a current factor; refused where the account requires one and it is their last. */
  async disable(person: Person, input: FactorInput, from: FactorSource) {
    await this.refuseLastFactorIfRequired(person, await this.passkeyCount(person.id));
    await this.check(person, input, from, 'disable');
    await deleteTotp(this.opts.db, person.id);
    await this.audit(person, 'two_factor.disabled', from.sourceIp, 'succeeded', { factor: 'totp' });
  }

  /** Removes one of the person's passkeys after a current factor (another passkey, this one, or a code). */
  async removePasskey(person: Person, passkeyId: string, input: FactorInput, from: FactorSource) {
    const passkeys = this.requirePasskeys();
    const passkey = await passkeys.requireOwn(person.id, passkeyId);
    await this.refuseLastFactorIfRequired(person, (await this.passkeyCount(person.id)) - 1 + ((await this.hasTotp(person.id)) ? 1 : 0));
    await this.check(person, input, from, 'disable');
    await passkeys.remove(person.id, passkeyId);
    await this.audit(person, 'two_factor.disabled', from.sourceIp, 'succeeded', { factor: 'passkey', passkey: passkey.name });
  }

  /** Keeps a passkey the person enrolled (answering registration options handed to this session). */
  async addPasskey(person: Person, response: Parameters<Passkeys['register']>[2], name: string, from: FactorSource & { browserKey: string }) {
    const passkey = await this.requirePasskeys().register(person, from.browserKey, response, name);
    await this.audit(person, 'two_factor.enabled', from.sourceIp, 'succeeded', { factor: 'passkey', passkey: passkey.name });
    return passkey;
  }

  async renamePasskey(person: Person, passkeyId: string, name: string, sourceIp: string) {
    const before = await this.requirePasskeys().requireOwn(person.id, passkeyId);
    const passkey = await this.requirePasskeys().rename(person.id, passkeyId, name);
    await this.audit(person, 'two_factor.passkey_renamed', sourceIp, 'succeeded', { from: before.name, to: name });
    return passkey;
  }

  requirePasskeys(): Passkeys {
    if (!this.opts.passkeys) throw new AppError('invalid_state', 'passkeys are not offered here');
    return this.opts.passkeys;
  }

  /** The owner's rule; the owner turning it on must have a factor themselves (or they would be asked to enrol at once). */
  async setAccountRule(owner: Person, required: boolean, sourceIp: string) {
    if (required && !(await this.hasFactor(owner.id))) {
      throw new AppError('invalid_state', 'enrol an authenticator or a passkey yourself before requiring two factors of every member');
    }
    await setAccountRequiresTwoFactors(this.opts.db, owner.accountId, required);
    await this.audit(owner, 'account.two_factors_required', sourceIp, 'succeeded', { required });
    return { required };
  }

  /** The operator's reset (`rln-cloud user reset-2fa <email>`): the person's authenticator, recovery codes and passkeys go. */
  async reset(emailRaw: string) {
    const email = normalEmail(emailRaw);
    const user = await findUserByEmail(this.opts.db, email);
    if (!user) throw new AppError('user_not_found', `no user with email ${email}`);
    const had = await this.hasFactor(user.id);
    await deleteTotp(this.opts.db, user.id);
    const passkeys = await deleteUserPasskeys(this.opts.db, user.id);
    await clearSignInFailures(this.opts.db, this.failureKey({ id: user.id }));
    await this.audit({ id: user.id, email, accountId: user.account_id }, 'two_factor.reset', null, 'succeeded', { hadFactor: had, passkeysRemoved: passkeys });
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

  private async failed(person: Person, sourceIp: string, action: AuditAction, details?: Record<string, unknown>) {
    await recordSignInFailure(this.opts.db, this.failureKey(person), FAILURE_WINDOW_S);
    await this.audit(person, action, sourceIp, 'failed', details);
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

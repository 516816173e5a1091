// Passkeys (WebAuthn, with @simplewebauthn/server checking every signature): enrolment, a passkey
// as a second factor (or to confirm a change), and a sign-in without a password. The relying party
// is PUBLIC_URL's host name and its origin: browsers refuse WebAuthn on an IP address, so with the
// laptop default (http://127.0.0.1:8080) every ceremony answers passkeys_need_host_name instead.
// Each challenge is handed to one browser (its session cookie, or a one-off cookie before there is
// a session), used once and expires; the signature counter only moves forward.
import { isIP } from 'node:net';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Database } from '../db/database.ts';
import {
  countLiveChallenges,
  countPasskeys,
  deletePasskey,
  findPasskeyByCredential,
  insertChallenge,
  insertPasskey,
  listPasskeys,
  recordPasskeyUse,
  renamePasskey,
  takeChallenge,
  type ChallengePurpose,
} from '../db/passkeys.ts';
import { AppError } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import type { StoredPasskey } from '../domain/passkey.ts';

const RP_NAME = 'RLN Cloud';
// Long enough to find a security key and touch it; a challenge is worth nothing after.
const CHALLENGE_TTL_MS = 5 * 60_000;
const MAX_PASSKEYS = 20;
// Password-less sign-ins started and not finished per client address: anyone may start one, and
// each is a row until it expires; a page that signs in needs one at a time.
const MAX_LIVE_SIGN_INS_PER_ADDRESS = 20;
// EdDSA, ES256, RS256 (COSE ids): what authenticators make. Named here rather than left to the
// library, whose default probes the runtime for post-quantum ML-DSA (an experimental Web Crypto
// feature on Node 24 that prints a warning, absent on Node 20): the same list on both.
const ALGORITHMS = [-8, -7, -257];

export interface RelyingParty {
  id: string;
  origin: string;
}

/** The relying party of a public URL, or undefined when its host is an IP address (browsers refuse WebAuthn there). */
export function relyingPartyOf(publicUrl: string): RelyingParty | undefined {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return undefined;
  return { id: host, origin: url.origin };
}

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const present = (row: StoredPasskey): PasskeyView => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
});

/** The WebAuthn user handle of a person: their id, so a discoverable passkey names whose it is. */
const userHandleOf = (userId: string) => isoBase64URL.fromUTF8String(userId);

/** Why an assertion was refused: for the audit trail, never for the person (they are told "refused"). */
export type Refusal = { ok: false; reason: string };
export type Checked = { ok: true; passkey: StoredPasskey } | Refusal;

export class Passkeys {
  private readonly rp: RelyingParty | undefined;

  constructor(private readonly opts: { db: Database; publicUrl: string }) {
    this.rp = relyingPartyOf(opts.publicUrl);
  }

  /** Whether passkeys can work at all here (PUBLIC_URL names a host). */
  get available() {
    return this.rp !== undefined;
  }

  private relyingParty(): RelyingParty {
    if (!this.rp) {
      throw new AppError(
        'passkeys_need_host_name',
        `passkeys need a host name: PUBLIC_URL (${this.opts.publicUrl}) is an IP address, which browsers refuse for passkeys; reach the service by a name (http://localhost:<port> on a laptop)`,
      );
    }
    return this.rp;
  }

  list = async (userId: string) => (await listPasskeys(this.opts.db, userId)).map(present);
  count = (userId: string) => countPasskeys(this.opts.db, userId);

  private async challengeFor(purpose: ChallengePurpose, browserKey: string, userId: string | null, challenge: string, address: string | null = null) {
    await insertChallenge(this.opts.db, { challenge, purpose, browserKey, userId, address, expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS) });
  }

  /** Options for navigator.credentials.create(): a discoverable passkey where the authenticator can keep one. */
  async registrationOptions(person: { id: string; email: string }, browserKey: string) {
    const rp = this.relyingParty();
    const existing = await listPasskeys(this.opts.db, person.id);
    if (existing.length >= MAX_PASSKEYS) throw new AppError('invalid_state', `you have ${MAX_PASSKEYS} passkeys; remove one first`);
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: rp.id,
      userName: person.email,
      userID: isoBase64URL.toBuffer(userHandleOf(person.id)),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, ...(p.transports.length > 0 ? { transports: p.transports } : {}) })),
      // Discoverable, so that it also signs in without an email or a password.
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      timeout: CHALLENGE_TTL_MS,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await this.challengeFor('register', browserKey, person.id, options.challenge);
    return options;
  }

  /** Checks the authenticator's answer to registrationOptions() and keeps the passkey. */
  async register(person: { id: string }, browserKey: string, response: RegistrationResponseJSON, name: string): Promise<PasskeyView> {
    const rp = this.relyingParty();
    const challenge = challengeOf(response);
    if (!challenge || !(await takeChallenge(this.opts.db, { challenge, purpose: 'register', browserKey, userId: person.id }))) {
      throw new AppError('invalid_state', 'this passkey enrolment was not started here, was used already or expired; start again');
    }
    let verified;
    try {
      verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false, supportedAlgorithmIDs: ALGORITHMS });
    } catch (err) {
      throw new AppError('invalid_request', `the passkey was refused: ${(err as Error).message}`);
    }
    if (!verified.verified) throw new AppError('invalid_request', 'the passkey was refused');
    const { credential } = verified.registrationInfo;
    const id = newId();
    const inserted = await insertPasskey(this.opts.db, {
      id,
      userId: person.id,
      credentialId: credential.id,
      publicKey: isoBase64URL.fromBuffer(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
    });
    if (!inserted) throw new AppError('invalid_state', 'this passkey is enrolled already');
    return (await this.list(person.id)).find((p) => p.id === id)!;
  }

  async rename(userId: string, id: string, name: string): Promise<PasskeyView> {
    const row = await renamePasskey(this.opts.db, userId, id, name);
    if (!row) throw passkeyNotFound(id);
    return present(row);
  }

  /** Throws passkey_not_found unless the person has it (another person's passkey answers the same). */
  async requireOwn(userId: string, id: string): Promise<PasskeyView> {
    const found = (await this.list(userId)).find((p) => p.id === id);
    if (!found) throw passkeyNotFound(id);
    return found;
  }

  async remove(userId: string, id: string) {
    if (!(await deletePasskey(this.opts.db, userId, id))) throw passkeyNotFound(id);
  }

  /** Options for navigator.credentials.get() naming the person's passkeys: a second factor, or a change confirmed. */
  async assertionOptions(userId: string, browserKey: string) {
    const rp = this.relyingParty();
    const passkeys = await listPasskeys(this.opts.db, userId);
    if (passkeys.length === 0) throw new AppError('invalid_state', 'you have no passkey');
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials: passkeys.map((p) => ({ id: p.credentialId, ...(p.transports.length > 0 ? { transports: p.transports } : {}) })),
      userVerification: 'preferred',
      timeout: CHALLENGE_TTL_MS,
    });
    await this.challengeFor('assert', browserKey, userId, options.challenge);
    return options;
  }

  /** Checks an answer to assertionOptions(): one of the person's passkeys, present (a second factor needs no PIN). */
  checkAssertion(userId: string, browserKey: string, response: AuthenticationResponseJSON): Promise<Checked> {
    return this.verify(response, { purpose: 'assert', browserKey, userId, requireUserVerification: false });
  }

  /** Options for a sign-in without a password: no credentials named, the browser offers the passkeys it holds for this site. */
  async signInOptions(browserKey: string, clientAddress: string) {
    const rp = this.relyingParty();
    if ((await countLiveChallenges(this.opts.db, clientAddress, 'sign_in')) >= MAX_LIVE_SIGN_INS_PER_ADDRESS) {
      throw new AppError('rate_limited', 'too many passkey sign-ins started from this address; finish one or try again in 5 minutes', {
        retryAfterSeconds: CHALLENGE_TTL_MS / 1000,
      });
    }
    const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', timeout: CHALLENGE_TTL_MS });
    await this.challengeFor('sign_in', browserKey, null, options.challenge, clientAddress);
    return options;
  }

  /**
   * Checks an answer to signInOptions(). The authenticator must have verified its user (a PIN or
   * a fingerprint): the passkey is then two factors at once, possession and that check.
   */
  async checkSignIn(browserKey: string, response: AuthenticationResponseJSON): Promise<Checked> {
    const checked = await this.verify(response, { purpose: 'sign_in', browserKey, userId: null, requireUserVerification: true });
    if (checked.ok && response.response.userHandle && response.response.userHandle !== userHandleOf(checked.passkey.userId)) {
      return { ok: false, reason: 'the user handle is not the passkey owner\'s' };
    }
    return checked;
  }

  private async verify(
    response: AuthenticationResponseJSON,
    opts: { purpose: ChallengePurpose; browserKey: string; userId: string | null; requireUserVerification: boolean },
  ): Promise<Checked> {
    const rp = this.relyingParty();
    const challenge = challengeOf(response);
    if (!challenge || !(await takeChallenge(this.opts.db, { challenge, purpose: opts.purpose, browserKey: opts.browserKey, userId: opts.userId }))) {
      return { ok: false, reason: 'challenge unknown, used, expired or not handed to this browser' };
    }
    const passkey = typeof response.id === 'string' ? await findPasskeyByCredential(this.opts.db, response.id) : undefined;
    if (!passkey || (opts.userId !== null && passkey.userId !== opts.userId)) return { ok: false, reason: 'not a passkey of this person' };
    const counter = passkey.counter;
    let newCounter: number;
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter },
        requireUserVerification: opts.requireUserVerification,
      });
      if (!verified.verified) return { ok: false, reason: 'signature refused' };
      newCounter = verified.authenticationInfo.newCounter;
    } catch (err) {
      return { ok: false, reason: (err as Error).message.slice(0, 200) };
    }
    // The counter check again, in the write: two requests racing with one assertion cannot both pass.
    if (!(await recordPasskeyUse(this.opts.db, passkey.id, counter, newCounter))) return { ok: false, reason: 'signature counter did not move forward' };
    return { ok: true, passkey };
  }
}

/** The challenge an authenticator signed, from the clientDataJSON it answered; undefined when that is not readable. */
function challengeOf(response: { response?: { clientDataJSON?: unknown } }): string | undefined {
  try {
    const data = response.response?.clientDataJSON;
    if (typeof data !== 'string') return undefined;
    const challenge = decodeClientDataJSON(data).challenge;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 128 ? challenge : undefined;
  } catch {
    return undefined;
  }
}

const passkeyNotFound = (id: string) => new AppError('passkey_not_found', `passkey ${id} was not found`);

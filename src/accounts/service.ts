// Users, their plans and API tokens: what the operator CLI and the authentication hook use.
import type { Database } from '../db/database.ts';
import {
  findUserByEmail,
  findUserByTokenHash,
  insertToken,
  insertOwnAccount,
  insertUser,
  listTokens,
  findUserToken,
  revokeToken,
  touchToken,
  updateUserPassword,
  type MemberRow,
  type TokenRow,
} from '../db/users.ts';
import { findPlan, listPlans } from '../db/plans.ts';
import type { Role } from '../domain/roles.ts';
import { findUserNodeIds } from '../db/nodes.ts';
import type { Plan } from '../domain/plans.ts';
import { deleteOtherUserSessions } from '../db/web-sessions.ts';
import { AppError } from '../errors.ts';
import { generateToken, hashToken, isId, looksLikeToken, newId } from '../auth/tokens.ts';
import { hashPassword } from '../auth/passwords.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import { MAX_SCOPE_NODES, TOKEN_ACCESS, type TokenAccess, type TokenScope } from './token-scope.ts';
import { normalEmail } from '../domain/email.ts';

export interface AuthenticatedUser {
  /** The member's own user id. */
  id: string;
  email: string;
  /** The account whose nodes, certificates, backups and usage the member works with (domain/roles.ts). */
  accountId: string;
  role: Role;
  /** The account's plan. */
  plan: Plan;
  tokenId: string;
  /** What the credential may do: a token's scope; a web session is unscoped. */
  scope: TokenScope;
}

/** A scope as asked for: every part optional, an unscoped token when all are left out. */
export interface TokenScopeInput {
  readOnly?: boolean;
  nodeIds?: readonly string[];
  access?: TokenAccess;
}

/** What is taken for an email address (users, invitations): no more than its shape. */
export const EMAIL_ADDRESS = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

// Writing last_used_at on every request would turn each read into a write; a minute is precise enough.
const TOUCH_EVERY_MS = 60_000;

export class AccountService {
  constructor(private readonly db: Database) {}

  async createUser(input: { email: string; plan?: string; password?: string }) {
    const email = normalEmail(input.email);
    if (!EMAIL_ADDRESS.test(email)) throw new AppError('invalid_request', `"${input.email}" is not an email address`);
    const plan = input.plan ?? 'starter';
    if (!(await findPlan(this.db, plan))) {
      const names = (await listPlans(this.db)).map((p) => p.name);
      throw new AppError('invalid_request', `plan must be one of ${names.join(', ')}`);
    }
    if (input.password !== undefined && input.password.length < 8) {
      throw new AppError('invalid_request', 'password must be at least 8 characters');
    }
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const user = await this.db.transaction(async (tx) => {
      const created = await insertUser(tx, { id: newId(), email, passwordHash });
      if (created) await insertOwnAccount(tx, created.id, plan);
      return created;
    });
    if (!user) throw new AppError('user_exists', `a user with email ${email} already exists`);
    return { id: user.id, email: user.email, plan, accountId: user.id, createdAt: user.created_at.toISOString() };
  }

  async setPassword(emailRaw: string, password: string) {
    const user = await this.requireUser(emailRaw);
    if (password.length < 8) throw new AppError('invalid_request', 'password must be at least 8 characters');
    const passwordHash = await hashPassword(password);
    // A new password shuts out whoever knew the old one: every web session of theirs ends (their
    // API tokens and certificates stay, each revocable on its own).
    const endedSessions = await this.db.transaction(async (tx) => {
      await updateUserPassword(tx, user.id, passwordHash);
      return deleteOtherUserSessions(tx, user.id, undefined);
    });
    return { id: user.id, email: user.email, endedSessions };
  }

  async createToken(emailRaw: string, name = 'default', expiresInDays?: number, scopeInput: TokenScopeInput = {}) {
    const user = await this.requireUser(emailRaw);
    if (name.length === 0 || name.length > 100) throw new AppError('invalid_request', 'token name must be 1-100 characters');
    const scope = await this.checkScope(user.account_id, scopeInput);
    const token = generateToken();
    const expiresAt = expiresInDays ? new Date(Date.now() + expiresInDays * 86_400_000) : null;
    const row = await insertToken(this.db, { id: newId(), userId: user.id, name, tokenHash: hashToken(token), expiresAt, ...scope });
    return {
      id: row.id,
      token,
      name: row.name,
      userId: user.id,
      accountId: user.account_id,
      email: user.email,
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at?.toISOString() ?? null,
      ...scopeOf(row),
    };
  }

  /**
   * The scope to store, or a 400 naming the field. A node id that is not one of the user's nodes
   * (missing, or another user's) is refused with the same message either way, so a scope cannot be
   * used to learn which ids exist.
   */
  private async checkScope(userId: string, input: TokenScopeInput): Promise<TokenScope> {
    const access = input.access ?? 'all';
    if (!TOKEN_ACCESS.includes(access)) throw new AppError('invalid_request', `access must be one of ${TOKEN_ACCESS.join(', ')}`, { field: 'access' });
    let nodeIds: string[] | null = null;
    if (input.nodeIds !== undefined) {
      if (input.nodeIds.length === 0) {
        throw new AppError('invalid_request', 'nodeIds must name at least one node; leave it out for a token for every node', { field: 'nodeIds' });
      }
      nodeIds = [...new Set(input.nodeIds)];
      if (nodeIds.length > MAX_SCOPE_NODES) throw new AppError('invalid_request', `nodeIds may name at most ${MAX_SCOPE_NODES} nodes`, { field: 'nodeIds' });
      const malformed = nodeIds.find((id) => !isId(id));
      if (malformed !== undefined) throw new AppError('invalid_request', `nodeIds: "${malformed.slice(0, 64)}" is not a node id (32 lowercase hex characters)`, { field: 'nodeIds' });
      const own = await findUserNodeIds(this.db, userId, nodeIds);
      const unknown = nodeIds.find((id) => !own.has(id));
      if (unknown !== undefined) throw new AppError('invalid_request', `nodeIds: node ${unknown} was not found`, { field: 'nodeIds', nodeId: unknown });
    }
    return { readOnly: input.readOnly ?? false, nodeIds, access };
  }

  async revokeToken(tokenId: string) {
    if (!isId(tokenId)) throw new AppError('invalid_request', `"${tokenId}" is not a token id (32 hex characters)`);
    const row = await revokeToken(this.db, tokenId);
    if (!row) throw new AppError('token_not_found', `token ${tokenId} was not found`);
    for (const listener of this.tokenRevokedListeners) listener(tokenId);
    return { id: row.id, userId: row.user_id, revokedAt: row.revoked_at!.toISOString() };
  }

  private readonly tokenRevokedListeners: Array<(tokenId: string) => void> = [];

  /** Lets those who remember tokens (the gateways, the API on PGlite) drop one the moment it is revoked here. */
  onTokenRevoked(listener: (tokenId: string) => void) {
    this.tokenRevokedListeners.push(listener);
  }

  private readonly memberChangedListeners: Array<(userId: string) => void> = [];

  /**
   * Lets those who remember authenticated members (the gateways, the API on PGlite) drop a member
   * the moment their role changes or they are removed here (accounts/members.ts).
   */
  onMemberChanged(listener: (userId: string) => void) {
    this.memberChangedListeners.push(listener);
  }

  /** Called once a member's role change or removal is committed. */
  memberChanged(userId: string) {
    for (const listener of this.memberChangedListeners) listener(userId);
  }

  /** The id of the user with this email (the operator's commands name users by email). */
  async userIdOf(emailRaw: string): Promise<string> {
    return (await this.requireUser(emailRaw)).id;
  }

  /** The account a user is a member of (its trail is the account's: the operator's `audit list --user`). */
  async accountIdOf(emailRaw: string): Promise<string> {
    return (await this.requireUser(emailRaw)).account_id;
  }

  /** Every token of the user (the operator's `token list`). */
  async listTokens(emailRaw: string) {
    const user = await this.requireUser(emailRaw);
    return (await listTokens(this.db, user.id)).map(presentToken);
  }

  /** One page of the caller's tokens, oldest first, and the cursor of the next (null after the last). */
  async listTokenPage(userId: string, limit: number, cursor: string | undefined) {
    const afterId = cursor === undefined ? undefined : decodeCursor('token', cursor, /^[0-9a-f]{32}$/);
    if (afterId !== undefined && !(await findUserToken(this.db, userId, afterId))) throw staleCursor();
    const rows = await listTokens(this.db, userId, { limit: limit + 1, afterId });
    const page = pageOf(rows, limit, (last) => encodeCursor('token', last.id));
    return { tokens: page.items.map(presentToken), nextCursor: page.nextCursor };
  }

  /** The user a bearer token belongs to, or undefined for a missing, revoked or expired token. */
  async authenticate(token: string): Promise<AuthenticatedUser | undefined> {
    return (await this.authenticateUntil(token))?.user;
  }

  /** authenticate, and until when the token is valid (null: until revoked). */
  async authenticateUntil(token: string): Promise<{ user: AuthenticatedUser; expiresAt: Date | null } | undefined> {
    if (!looksLikeToken(token)) return undefined;
    const row = await findUserByTokenHash(this.db, hashToken(token));
    if (!row) return undefined;
    if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > TOUCH_EVERY_MS) {
      await touchToken(this.db, row.token_id);
    }
    return { user: { ...memberOf(row), tokenId: row.token_id, scope: scopeOf(row) }, expiresAt: row.token_expires_at };
  }

  private async requireUser(emailRaw: string): Promise<MemberRow> {
    const user = await findUserByEmail(this.db, normalEmail(emailRaw));
    if (!user) throw new AppError('user_not_found', `no user with email ${emailRaw}`);
    return user;
  }
}

/** Who a member is, as the authentication of a token or a session gives it. */
export const memberOf = (row: MemberRow) => ({ id: row.id, email: row.email, accountId: row.account_id, role: row.role, plan: row.plan });

function presentToken(t: TokenRow) {
  return {
    id: t.id,
    name: t.name,
    createdAt: t.created_at.toISOString(),
    lastUsedAt: t.last_used_at?.toISOString() ?? null,
    expiresAt: t.expires_at?.toISOString() ?? null,
    revokedAt: t.revoked_at?.toISOString() ?? null,
    ...scopeOf(t),
  };
}

const scopeOf = (row: Pick<TokenRow, 'read_only' | 'node_ids' | 'access'>): TokenScope => ({
  readOnly: row.read_only,
  nodeIds: row.node_ids,
  access: row.access,
});

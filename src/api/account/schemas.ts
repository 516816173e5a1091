// The answers of the members and invitations routes (accounts/members.ts presents them).
import { Type, type Static } from '@sinclair/typebox';
import { INVITABLE_ROLES, ROLES } from '../../domain/roles.ts';
import { ID_PATTERN } from '../schemas.ts';

export const RoleField = Type.Union(ROLES.map((r) => Type.Literal(r)), {
  description: 'viewer reads; developer also changes nodes, tokens, certificates and backups; admin also manages members; owner also the account.',
});
export const InvitableRoleField = Type.Union(INVITABLE_ROLES.map((r) => Type.Literal(r)), { description: 'Any role but owner: an account has one.' });

export const Member = Type.Object({
  userId: Type.String({ description: "The member's user id (the account's id is its creator's)." }),
  email: Type.String(),
  role: RoleField,
  joinedAt: Type.String({ format: 'date-time' }),
});

export const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: InvitableRoleField,
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Only on a revoked invitation (`?status=revoked`).' })),
});

export const MemberParams = Type.Object({ userId: Type.String({ pattern: ID_PATTERN, description: "The member's user id." }) });
export type MemberParams = Static<typeof MemberParams>;

export const InvitationParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN, description: 'Invitation id.' }) });
export type InvitationParams = Static<typeof InvitationParams>;

// The roles of an account's members, weakest first: each may do what the ones before it may.
//   viewer     reads only
//   developer  nodes and tokens, no members
//   admin      everything but the account itself (its plan, its owner)
//   owner      everything; every account has exactly one, at first the user it was made from

export const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** The roles an invitation may give: an account has one owner. */
export const INVITABLE_ROLES = ['admin', 'developer', 'viewer'] as const satisfies readonly Role[];

export const roleRank = (role: Role) => ROLES.indexOf(role);

/** Whether `role` may do what needs `least`. */
export const roleAllows = (role: Role, least: Role) => roleRank(role) >= roleRank(least);

import type { OrganizationKind, Role } from '../db/schema.js';

/** The six scopes a client may register (docs/configuration.md, "The clients file"), in display order. */
export const SCOPES = ['read_only', 'read_write', 'openid', 'offline_access', 'read:bank_accounts', 'sync:connected_accounts'] as const;
export type Scope = (typeof SCOPES)[number];

export const FDX_SCOPES: readonly Scope[] = ['read:bank_accounts', 'sync:connected_accounts'];
/** Scopes that give access to data, as opposed to identity (openid) or compatibility (offline_access). */
export const RESOURCE_SCOPES: readonly Scope[] = ['read_only', 'read_write', ...FDX_SCOPES];

const READ_ONLY: readonly Scope[] = ['read_only', 'openid', 'offline_access'];
const MEMBER: readonly Scope[] = [...READ_ONLY, 'read_write'];
const ADMIN: readonly Scope[] = [...MEMBER, ...FDX_SCOPES];

/** What each role may grant (docs/accounts.md, "Roles"): bank data is an organization-level decision. */
export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  read_only: READ_ONLY,
  member: MEMBER,
  admin: ADMIN,
  owner: ADMIN,
};

/**
 * What each kind of organization has to share. Bank data (the FDX API) is held for nonprofits
 * only: a fund provider's authorization never carries an FDX scope.
 */
export const KIND_SCOPES: Readonly<Record<OrganizationKind, readonly Scope[]>> = {
  nonprofit: SCOPES,
  fund_provider: SCOPES.filter((s) => !FDX_SCOPES.includes(s)),
  grantmaker: SCOPES.filter((s) => !FDX_SCOPES.includes(s)),
  platform: SCOPES.filter((s) => !FDX_SCOPES.includes(s)),
  lockbox_provider: SCOPES.filter((s) => !FDX_SCOPES.includes(s)),
};

/** requested ∩ allowed, in the canonical order. */
export function intersectScopes(requested: Iterable<string>, ...allowed: Iterable<string>[]): Scope[] {
  const sets = allowed.map((a) => new Set(a));
  const wanted = new Set(requested);
  return SCOPES.filter((s) => wanted.has(s) && sets.every((set) => set.has(s)));
}

/** The scopes a role permits out of a token's scopes; an approver's current role narrows a user-subject token. */
export function narrowToRole(scopes: Iterable<string>, role: Role | undefined): Scope[] {
  return role ? intersectScopes(scopes, ROLE_SCOPES[role]) : [];
}

export function hasResourceScope(scopes: Iterable<string>): boolean {
  for (const s of scopes) if ((RESOURCE_SCOPES as readonly string[]).includes(s)) return true;
  return false;
}

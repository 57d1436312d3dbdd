import type { Role } from '../db/schema.js';

/**
 * Who may give which role in an organization (docs/accounts.md, "Roles"): an Owner gives any
 * role; an Admin gives Admin, Member and Read-only but neither gives nor takes the Owner role.
 * Members and Read-only users give none. The same rule says whom one may act on: changing the
 * role of, or removing, a member whose role is R needs `mayAssignRole(actor, R)`. (That an
 * organization keeps at least one Owner is the membership service's rule.)
 */
export function mayAssignRole(actor: Role, role: Role): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && role !== 'owner';
}

import { formatEin } from '../accounts/ein.js';
import { listMemberships } from '../accounts/repository.js';
import type { Executor } from '../db/executor.js';
import type { OrganizationKind, Role } from '../db/schema.js';

/**
 * A signed-in user's organizations as every page sees them (the authorization flow's choice
 * and consent, the dashboard's navigation and guards), with the words the pages use for roles
 * and kinds.
 */

export interface Membership {
  id: string;
  name: string;
  ein: string;
  kind: OrganizationKind;
  role: Role;
  /** The organization asks every member for a second factor (docs/oauth.md, "Second factors and step-up"). */
  requireMfa: boolean;
}

export const ROLE_NAMES: Readonly<Record<Role, string>> = { owner: 'Owner', admin: 'Admin', member: 'Member', read_only: 'Read-only' };

/** The kind as the pages name it: a label ("Fund provider") and a noun in a sentence ("fund provider"). */
export const KIND_LABELS: Readonly<Record<OrganizationKind, { label: string; noun: string }>> = {
  nonprofit: { label: 'Nonprofit', noun: 'nonprofit' },
  fund_provider: { label: 'Fund provider', noun: 'fund provider' },
  grantmaker: { label: 'Grantmaker', noun: 'grantmaker' },
  platform: { label: 'Giving platform', noun: 'giving platform' },
  lockbox_provider: { label: 'Lockbox provider', noun: 'lockbox provider' },
};

type MembershipRow = Awaited<ReturnType<typeof listMemberships>>[number];

export function toMemberships(rows: readonly MembershipRow[]): Membership[] {
  return rows.map((m) => ({ id: m.id, name: m.name, ein: formatEin(m.ein), kind: m.kind, role: m.role, requireMfa: m.require_mfa }));
}

/** The organizations a user belongs to, with the role in each, ordered by name. */
export async function membershipsOfUser(db: Executor, userId: string): Promise<Membership[]> {
  return toMemberships(await listMemberships(db, userId));
}

/** Owners and Admins manage their organization on the dashboard. */
export function manages(membership: Membership): boolean {
  return membership.role === 'owner' || membership.role === 'admin';
}

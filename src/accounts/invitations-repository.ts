import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment, Role } from '../db/schema.js';

/**
 * The invitations table (migration 20261125000100_identity, docs/accounts.md "Invitations"):
 * rows are found by the SHA-256 of the link's token, never by the token itself.
 */

export function insertInvitation(
  db: Executor,
  values: {
    organization_id: string;
    email: string;
    role: Role;
    token_hash: string;
    environment: Environment;
    invited_by: string | null;
    expires_at: Date;
  },
) {
  return db.insertInto('invitations').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Closes the open invitation of an address (expired or not) before a new one replaces it: the
 * partial unique index invitations_open_key allows one open row per address and organization.
 */
export function revokeOpenInvitationOf(db: Executor, organizationId: string, email: string) {
  return db
    .updateTable('invitations')
    .set({ revoked_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning(['id', 'role'])
    .executeTakeFirst();
}

/** An invitation by the hash of its token, with its organization (any state: the page says which). */
export function findInvitationByTokenHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('invitations as i')
    .innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .leftJoin('users as inviter', 'inviter.id', 'i.invited_by')
    .select([
      'i.id',
      'i.organization_id',
      'i.email',
      'i.role',
      'i.token_hash',
      'i.environment',
      'i.expires_at',
      'i.accepted_at',
      'i.revoked_at',
      'o.name as organization_name',
      'o.ein as organization_ein',
      'o.kind as organization_kind',
      'o.require_mfa as organization_require_mfa',
      'inviter.email as inviter_email',
    ])
    .where('i.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** The organization's invitations still waiting for an answer and not expired, newest first. */
export function listOpenInvitationsOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('invitations as i')
    .leftJoin('users as inviter', 'inviter.id', 'i.invited_by')
    .select(['i.id', 'i.email', 'i.role', 'i.environment', 'i.created_at', 'i.expires_at', 'inviter.email as inviter_email'])
    .where('i.organization_id', '=', organizationId)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', sql<Date>`now()`)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id')
    .execute();
}

/** An open (not expired) invitation of this organization only, by id or by address. */
export function findOpenInvitationOf(db: Executor, organizationId: string, which: { id: string } | { email: string }) {
  let query = db
    .selectFrom('invitations')
    .select(['id', 'email', 'role', 'environment'])
    .where('organization_id', '=', organizationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`);
  query = 'id' in which ? query.where('id', '=', which.id) : query.where('email', '=', which.email);
  return query.forUpdate().executeTakeFirst();
}

export async function markInvitationRevoked(db: Executor, invitationId: string): Promise<void> {
  await db.updateTable('invitations').set({ revoked_at: new Date() }).where('id', '=', invitationId).execute();
}

/**
 * Takes the invitation, once: the conditional update is the only way to accept one, so of two
 * submissions at the same moment the second waits on the row lock, then finds it accepted and
 * updates nothing. Undefined when it is used, revoked or expired (or unknown).
 */
export function consumeInvitation(db: Executor, invitationId: string) {
  return db
    .updateTable('invitations')
    .set({ accepted_at: sql<Date>`now()` })
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['id', 'organization_id', 'email', 'role'])
    .executeTakeFirst();
}

/** Who accepted: set in the transaction that consumed it, once the new user's row exists. */
export async function recordAcceptedBy(db: Executor, invitationId: string, userId: string): Promise<void> {
  await db.updateTable('invitations').set({ accepted_by: userId }).where('id', '=', invitationId).execute();
}

/** The invited person's account: their first password counts as a change (password_changed_at). */
export function insertInvitedUser(db: Executor, values: { email: string; password_hash: string; display_name: string | null }) {
  return db
    .insertInto('users')
    .values({ ...values, password_changed_at: sql<Date>`now()` })
    .returning(['id', 'email'])
    .executeTakeFirstOrThrow();
}

import type { Executor } from '../db/executor.js';
import { sql, type Insertable } from 'kysely';
import type { Environment, OauthAuthorizationsTable } from '../db/schema.js';

/**
 * Queries on oauth_authorizations, our record of each consent (a Grant): who approved what
 * for which organization, until when, and whether it was revoked. authorizations.ts holds
 * the rules (revocation with its tokens, the 365-day ceiling) and calls these.
 */

export async function insertAuthorizationRow(db: Executor, values: Insertable<OauthAuthorizationsTable>): Promise<void> {
  await db.insertInto('oauth_authorizations').values(values).execute();
}

/** One indexed query: the authorization with its approver and the approver's current role. */
export function findAuthorizationWithApprover(db: Executor, environment: Environment, grantId: string) {
  return db
    .selectFrom('oauth_authorizations as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'a.user_id').onRef('m.organization_id', '=', 'a.organization_id'))
    .select([
      'a.grant_id',
      'a.subject_type',
      'a.user_id',
      'a.organization_id',
      'a.scopes',
      'a.revoked_at',
      'a.expires_at',
      'u.email',
      'u.display_name',
      'u.disabled_at',
      'm.role',
    ])
    .where('a.grant_id', '=', grantId)
    .where('a.environment', '=', environment)
    .executeTakeFirst();
}

/**
 * A live authorization in SQL (authorizations.ts isLive): not revoked, not past its ceiling.
 * `table` is the name the query gives oauth_authorizations.
 */
export function liveAuthorization(table = 'oauth_authorizations') {
  return sql<boolean>`${sql.ref(`${table}.revoked_at`)} is null and ${sql.ref(`${table}.expires_at`)} > ${new Date()}`;
}

export async function markAuthorizationUsed(db: Executor, grantId: string): Promise<void> {
  await db.updateTable('oauth_authorizations').set({ last_used_at: new Date() }).where('grant_id', '=', grantId).execute();
}

/** Marks an authorization revoked; false when it already was (or does not exist). */
export async function markAuthorizationRevoked(db: Executor, grantId: string, reason: string): Promise<boolean> {
  const updated = await db
    .updateTable('oauth_authorizations')
    .set({ revoked_at: new Date(), revoked_reason: reason })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .returning('grant_id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** The live user-subject authorizations one user approved for one organization, locked (FOR UPDATE). */
export function lockLiveUserAuthorizations(db: Executor, q: { userId: string; organizationId: string }) {
  return db
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'environment', 'client_id'])
    .where('user_id', '=', q.userId)
    .where('organization_id', '=', q.organizationId)
    .where('subject_type', '=', 'user')
    .where('revoked_at', 'is', null)
    .orderBy('grant_id')
    .forUpdate()
    .execute();
}

/**
 * The live (not revoked, not expired) authorizations one user gave one client for one
 * nonprofit, newest first: candidates for answering a new request without asking again.
 */
export async function listLiveAuthorizations(
  db: Executor,
  environment: Environment,
  q: { clientId: string; userId: string; organizationId: string },
) {
  return db
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'scopes', 'subject_type'])
    .where('environment', '=', environment)
    .where('client_id', '=', q.clientId)
    .where('user_id', '=', q.userId)
    .where('organization_id', '=', q.organizationId)
    .where(liveAuthorization())
    .orderBy('created_at', 'desc')
    .execute();
}

/** How many live user-subject authorizations one user approved for one organization (both environments). */
export async function countLiveUserAuthorizations(db: Executor, q: { userId: string; organizationId: string }): Promise<number> {
  const row = await db
    .selectFrom('oauth_authorizations')
    .select((eb) => eb.fn.countAll<string>().as('live'))
    .where('user_id', '=', q.userId)
    .where('organization_id', '=', q.organizationId)
    .where('subject_type', '=', 'user')
    .where(liveAuthorization())
    .executeTakeFirstOrThrow();
  return Number(row.live);
}

/** Every live user-subject authorization one user approved, in any organization and both environments, locked (disabling the user ends them). */
export function lockLiveAuthorizationsOfUser(db: Executor, userId: string) {
  return db
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'environment', 'client_id', 'organization_id'])
    .where('user_id', '=', userId)
    .where('subject_type', '=', 'user')
    .where('revoked_at', 'is', null)
    .orderBy('grant_id')
    .forUpdate()
    .execute();
}

/** Every live authorization of one organization, either subject, both environments, locked (removing the organization ends them). */
export function lockLiveAuthorizationsOfOrganization(db: Executor, organizationId: string) {
  return db
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'environment', 'client_id', 'subject_type', 'user_id'])
    .where('organization_id', '=', organizationId)
    .where('revoked_at', 'is', null)
    .orderBy('grant_id')
    .forUpdate()
    .execute();
}

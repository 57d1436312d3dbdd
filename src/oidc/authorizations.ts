import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Environment, Role, SubjectType } from '../db/schema.js';
import type { Executor } from '../accounts/repository.js';
import { hashId } from '../db/token-hash.js';
import { currentTokenUnit } from './token-unit.js';
import { deleteGrantTokens } from './revoked-tokens.js';

/** An authorization's ceiling: it ends 365 days after it began, whatever happens to its tokens. */
export const AUTHORIZATION_LIFETIME_SECONDS = 365 * 86_400;
export const TOKEN_MODELS = ['AccessToken', 'RefreshToken', 'AuthorizationCode'] as const;

export interface NewAuthorization {
  grantId: string;
  environment: Environment;
  clientId: string;
  subjectType: SubjectType;
  userId: string;
  organizationId: string;
  scopes: string[];
}

export async function insertAuthorization(db: Executor, a: NewAuthorization): Promise<void> {
  await db
    .insertInto('oauth_authorizations')
    .values({
      grant_id: a.grantId,
      environment: a.environment,
      client_id: a.clientId,
      subject_type: a.subjectType,
      user_id: a.userId,
      organization_id: a.organizationId,
      scopes: a.scopes,
      expires_at: new Date(Date.now() + AUTHORIZATION_LIFETIME_SECONDS * 1000),
    })
    .execute();
}

export interface AuthorizationContext {
  grantId: string;
  subjectType: SubjectType;
  userId: string;
  organizationId: string;
  scopes: string[];
  revoked: boolean;
  expiresAt: Date;
  email: string;
  displayName: string | null;
  userDisabled: boolean;
  /** The approving user's current role in the organization; undefined once they left. */
  role: Role | undefined;
}

/** One indexed query: the authorization with its approver and the approver's current role. */
export async function loadAuthorization(db: Executor, environment: Environment, grantId: string): Promise<AuthorizationContext | undefined> {
  const row = await db
    .selectFrom('oauth_authorizations as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'a.user_id').onRef('m.organization_id', '=', 'a.organization_id'))
    .select(['a.grant_id', 'a.subject_type', 'a.user_id', 'a.organization_id', 'a.scopes', 'a.revoked_at', 'a.expires_at', 'u.email', 'u.display_name', 'u.disabled_at', 'm.role'])
    .where('a.grant_id', '=', grantId)
    .where('a.environment', '=', environment)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    grantId: row.grant_id,
    subjectType: row.subject_type,
    userId: row.user_id,
    organizationId: row.organization_id,
    scopes: row.scopes,
    revoked: row.revoked_at !== null,
    expiresAt: row.expires_at,
    email: row.email,
    displayName: row.display_name,
    userDisabled: row.disabled_at !== null,
    role: row.role ?? undefined,
  };
}

/** loadAuthorization, answered from the request's TokenUnit when the token lookup already brought it. */
export async function authorizationForRequest(db: Executor, environment: Environment, grantId: string): Promise<AuthorizationContext | undefined> {
  const unit = currentTokenUnit();
  if (unit?.authorizations.has(grantId)) return unit.authorizations.get(grantId) ?? undefined;
  return loadAuthorization(db, environment, grantId);
}

export async function markAuthorizationUsed(db: Executor, grantId: string): Promise<void> {
  await db.updateTable('oauth_authorizations').set({ last_used_at: new Date() }).where('grant_id', '=', grantId).execute();
}

/**
 * Ends an authorization at once: every token and code it issued, its Grant, the sessions'
 * references to it, and our row (kept, marked revoked, for the record).
 */
export async function revokeAuthorization(db: Db, environment: Environment, grantId: string, reason: string): Promise<boolean> {
  return db.transaction().execute((trx) => revokeAuthorizationIn(trx, environment, grantId, reason));
}

/** revokeAuthorization inside the caller's transaction, so the revocation commits with the change that causes it. */
export async function revokeAuthorizationIn(trx: Executor, environment: Environment, grantId: string, reason: string): Promise<boolean> {
  await deleteGrantTokens(trx, environment, TOKEN_MODELS, grantId);
  await trx.deleteFrom('oidc_models').where('environment', '=', environment).where('model', '=', 'Grant').where('id', '=', hashId(grantId)).execute();
  await forgetGrantInSessions(trx, environment, grantId);
  const updated = await trx
    .updateTable('oauth_authorizations')
    .set({ revoked_at: new Date(), revoked_reason: reason })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .returning('grant_id')
    .executeTakeFirst();
  return updated !== undefined;
}

export interface RevokedAuthorization {
  grantId: string;
  environment: Environment;
  clientId: string;
}

/**
 * Revokes, in both environments, every live user-subject authorization one user approved for
 * one organization (with its tokens, as revokeAuthorizationIn does): what leaving the
 * organization ends for good, so that being added back later revives none of it.
 * Organization-subject authorizations belong to the organization and are left alone.
 */
export async function revokeUserAuthorizationsIn(trx: Executor, q: { userId: string; organizationId: string; reason: string }): Promise<RevokedAuthorization[]> {
  const rows = await trx
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'environment', 'client_id'])
    .where('user_id', '=', q.userId)
    .where('organization_id', '=', q.organizationId)
    .where('subject_type', '=', 'user')
    .where('revoked_at', 'is', null)
    .orderBy('grant_id')
    .forUpdate()
    .execute();
  const revoked: RevokedAuthorization[] = [];
  for (const row of rows) {
    if (await revokeAuthorizationIn(trx, row.environment, row.grant_id, q.reason)) revoked.push({ grantId: row.grant_id, environment: row.environment, clientId: row.client_id });
  }
  return revoked;
}

/** Removes a grant from the sessions that point at it, so no session keeps a dangling reference. */
export async function forgetGrantInSessions(db: Executor, environment: Environment, grantId: string): Promise<void> {
  await sql`
    update oidc_models s
    set payload = jsonb_set(s.payload, '{authorizations}', coalesce((
      select jsonb_object_agg(k, v) from jsonb_each(s.payload->'authorizations') as e(k, v)
      where v->>'grantId' is distinct from ${grantId}
    ), '{}'::jsonb))
    where s.environment = ${environment} and s.model = 'Session'
      and s.payload @? ${`$.authorizations.* ? (@.grantId == "${grantId.replace(/[^A-Za-z0-9_-]/g, '')}")`}::jsonpath`.execute(db);
}

/**
 * The live (not revoked, not expired) authorizations one user gave one client for one
 * nonprofit, newest first: candidates for answering a new request without asking again.
 */
export async function listLiveAuthorizations(db: Executor, environment: Environment, q: { clientId: string; userId: string; organizationId: string }) {
  return db
    .selectFrom('oauth_authorizations')
    .select(['grant_id', 'scopes', 'subject_type'])
    .where('environment', '=', environment)
    .where('client_id', '=', q.clientId)
    .where('user_id', '=', q.userId)
    .where('organization_id', '=', q.organizationId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .execute();
}

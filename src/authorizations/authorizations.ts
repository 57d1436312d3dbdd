import type { Db } from '../db/database.js';
import type { Environment, Role, SubjectType } from '../db/schema.js';
import { inTransaction, type Executor } from '../db/executor.js';
import { deleteModel, hashId } from '../db/provider-store.js';
import { deleteGrantTokens } from './revoked-tokens-repository.js';
import {
  findAuthorizationWithApprover,
  insertAuthorizationRow,
  lockLiveAuthorizationsOfUser,
  lockLiveUserAuthorizations,
  markAuthorizationRevoked,
} from './repository.js';
import { forgetGrantInSessions } from './sessions-repository.js';
import { markConsentOfGrantRevoked } from './fdx-consents-repository.js';

/**
 * Our authorizations (one per consent, keyed by the provider's Grant id): what an
 * authorization is allowed to be (365 days at most), how it is read, and how it ends (with
 * every token it issued). Shared by the authorization server, accounts/ (a member who leaves)
 * and the dashboard (an application disconnected); it imports only db/, so none of them
 * closes a circle through it. The queries are in repository.ts.
 */

/** An authorization's ceiling: it ends 365 days after it began, whatever happens to its tokens. */
export const AUTHORIZATION_LIFETIME_SECONDS = 365 * 86_400;
export const TOKEN_MODELS = ['AccessToken', 'RefreshToken', 'AuthorizationCode'] as const;

/**
 * Whether an authorization can still be used: not revoked, and not past its 365-day ceiling.
 * The same rule in SQL is repository.ts's liveAuthorization.
 */
export function isLive(authorization: { revoked: boolean; expiresAt: Date }, now = Date.now()): boolean {
  return !authorization.revoked && authorization.expiresAt.getTime() > now;
}

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
  await insertAuthorizationRow(db, {
    grant_id: a.grantId,
    environment: a.environment,
    client_id: a.clientId,
    subject_type: a.subjectType,
    user_id: a.userId,
    organization_id: a.organizationId,
    scopes: a.scopes,
    expires_at: new Date(Date.now() + AUTHORIZATION_LIFETIME_SECONDS * 1000),
  });
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

/** The authorization with its approver and the approver's current role (one indexed query). */
export async function loadAuthorization(
  db: Executor,
  environment: Environment,
  grantId: string,
): Promise<AuthorizationContext | undefined> {
  const row = await findAuthorizationWithApprover(db, environment, grantId);
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

/**
 * Ends an authorization at once: every token and code it issued, its Grant, the sessions'
 * references to it, and our row (kept, marked revoked, for the record).
 */
export async function revokeAuthorization(db: Db, environment: Environment, grantId: string, reason: string): Promise<boolean> {
  return inTransaction(db, (trx) => revokeAuthorizationIn(trx, environment, grantId, reason));
}

/** revokeAuthorization inside the caller's transaction, so the revocation commits with the change that causes it. */
export async function revokeAuthorizationIn(trx: Executor, environment: Environment, grantId: string, reason: string): Promise<boolean> {
  await deleteGrantTokens(trx, environment, TOKEN_MODELS, grantId);
  await deleteModel(trx, environment, 'Grant', hashId(grantId));
  await forgetGrantInSessions(trx, environment, grantId);
  // Its FDX consent ends with it, whatever ended it (docs/bank-data.md, "Consents").
  await markConsentOfGrantRevoked(trx, environment, grantId);
  return markAuthorizationRevoked(trx, grantId, reason);
}

/**
 * Signs a user out of the applications they connected as themselves (a password reset or
 * change can ask for it, as Auth0's and Keycloak's do): the tokens of every live user-subject
 * authorization of the user, in both environments, are deleted, so each application's next
 * refresh fails and it must send the user through sign-in again. The authorizations stay: the
 * consent given is remembered, and the organizations' own authorizations are not the user's.
 * Inside the caller's transaction; returns how many authorizations lost their tokens.
 */
export async function endApplicationTokensOfUser(trx: Executor, userId: string): Promise<number> {
  const authorizations = await lockLiveAuthorizationsOfUser(trx, userId);
  for (const a of authorizations) await deleteGrantTokens(trx, a.environment, TOKEN_MODELS, a.grant_id);
  return authorizations.length;
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
export async function revokeUserAuthorizationsIn(
  trx: Executor,
  q: { userId: string; organizationId: string; reason: string },
): Promise<RevokedAuthorization[]> {
  const rows = await lockLiveUserAuthorizations(trx, q);
  const revoked: RevokedAuthorization[] = [];
  for (const row of rows) {
    if (await revokeAuthorizationIn(trx, row.environment, row.grant_id, q.reason))
      revoked.push({ grantId: row.grant_id, environment: row.environment, clientId: row.client_id });
  }
  return revoked;
}

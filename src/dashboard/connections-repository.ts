import type { Executor } from '../db/executor.js';
import type { Environment, OrganizationKind, SubjectType } from '../db/schema.js';
import { liveAuthorization } from '../authorizations/repository.js';

export interface ConnectionRow {
  grant_id: string;
  client_id: string;
  client_name: string | null;
  subject_type: SubjectType;
  user_id: string;
  approver_email: string;
  organization_id: string;
  organization_name: string;
  organization_kind: OrganizationKind;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** The bank-data (FDX) consent the authorization holds, if any: any Owner or Admin may revoke such access. */
  fdx_consent_id: string | null;
}

function connections(db: Executor, environment: Environment) {
  return db
    .selectFrom('oauth_authorizations as a')
    .innerJoin('organizations as o', 'o.id', 'a.organization_id')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .leftJoin('oauth_clients as c', (join) => join.onRef('c.client_id', '=', 'a.client_id').onRef('c.environment', '=', 'a.environment'))
    .leftJoin('fdx_consents as fc', (join) => join.onRef('fc.grant_id', '=', 'a.grant_id').onRef('fc.environment', '=', 'a.environment'))
    .select([
      'a.grant_id',
      'a.client_id',
      'c.name as client_name',
      'a.subject_type',
      'a.user_id',
      'u.email as approver_email',
      'a.organization_id',
      'o.name as organization_name',
      'o.kind as organization_kind',
      'a.scopes',
      'a.created_at',
      'a.last_used_at',
      'a.revoked_at',
      'fc.id as fdx_consent_id',
    ])
    .where('a.environment', '=', environment);
}

/**
 * The live authorizations a user manages in one environment: the user-subject ones they
 * approved, and the organization-subject ones of the organizations they are Owner or Admin of.
 */
export async function listManagedConnections(
  db: Executor,
  environment: Environment,
  userId: string,
  adminOrganizationIds: readonly string[],
): Promise<ConnectionRow[]> {
  return connections(db, environment)
    .where(liveAuthorization('a'))
    .where((eb) => {
      const mine = eb.and([eb('a.subject_type', '=', 'user'), eb('a.user_id', '=', userId)]);
      if (adminOrganizationIds.length === 0) return mine;
      return eb.or([mine, eb.and([eb('a.subject_type', '=', 'organization'), eb('a.organization_id', 'in', [...adminOrganizationIds])])]);
    })
    .orderBy('a.created_at', 'desc')
    .execute();
}

/** One authorization of this environment, revoked or not; the caller decides who may see it. */
export async function findConnection(db: Executor, environment: Environment, grantId: string): Promise<ConnectionRow | undefined> {
  return connections(db, environment).where('a.grant_id', '=', grantId).executeTakeFirst();
}

/** Every live authorization for one organization in one environment, whoever approved it, newest first. */
export async function listOrganizationConnections(
  db: Executor,
  environment: Environment,
  organizationId: string,
): Promise<ConnectionRow[]> {
  return connections(db, environment)
    .where('a.organization_id', '=', organizationId)
    .where(liveAuthorization('a'))
    .orderBy('a.created_at', 'desc')
    .execute();
}

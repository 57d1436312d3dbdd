import type { Db } from '../../db/database.js';
import { sql } from 'kysely';
import { runPrepared } from '../../db/prepared-statements.js';
import type { StoredAccessToken } from '../../db/provider-store.js';
import type { Environment, OrganizationKind, Role, SubjectType } from '../../db/schema.js';
import type { FdxConsentResourceRow } from '../../db/schema-fdx.js';

export interface AccessTokenRow {
  /** The provider's stored token (db/provider-store.ts), looked up by hashId of the bearer; its fields: db/provider-payload.ts. */
  payload: StoredAccessToken;
  grant_id: string | null;
  authorization_client_id: string | null;
  subject_type: SubjectType | null;
  user_id: string | null;
  organization_id: string | null;
  /** The authorization's organization's kind: the DAF APIs are a fund provider's. */
  organization_kind: OrganizationKind | null;
  authorization_expires_at: Date | null;
  revoked_at: Date | null;
  user_disabled_at: Date | null;
  role: Role | null;
  client_id: string | null;
  ip_allow_list: string[] | null;
  /** The client's profile: a fapi2 client's token reads FDX data only under a consent (docs/bank-data.md, "Consents"). */
  client_profile: string | null;
  /** The authorization's FDX consent, when its client asked for one (docs/api.md, "FDX bank-data API", Consents). */
  fdx_consent_id: string | null;
  fdx_consent_status: 'PENDING' | 'ACTIVE' | 'EXPIRED' | 'REVOKED' | null;
  fdx_consent_expires_at: Date | null;
  fdx_lookback_period: number | null;
  fdx_consent_resources: FdxConsentResourceRow[] | null;
}

/**
 * Everything a call with an access token needs, in one indexed query: the token (by hash, from
 * the provider's table oidc_models: see db/provider-store.ts),
 * its authorization and its organization's kind, the approver's current membership and role, the client, and
 * the authorization's FDX consent if it has one (unique by grant_id). Read on
 * every call (roles take effect at once), so it is a prepared statement: planning this join
 * cost PostgreSQL more than running it. The authorization and client are lateral lookups
 * behind `offset 0`: flattened, a plan made on a young table's statistics (and kept by the
 * prepared statement) scanned every client of the environment with a join filter.
 */
export async function findAccessTokenContext(db: Db, environment: Environment, tokenHash: string): Promise<AccessTokenRow | undefined> {
  const rows = await runPrepared(
    db,
    'gateway_access_token_context',
    sql<AccessTokenRow>`select t.payload, t.grant_id,
       a.client_id as authorization_client_id, a.subject_type, a.user_id, a.organization_id,
       o.kind as organization_kind, a.expires_at as authorization_expires_at, a.revoked_at,
       u.disabled_at as user_disabled_at, m.role,
       c.client_id, c.ip_allow_list, c.profile as client_profile,
       fc.id as fdx_consent_id, fc.status as fdx_consent_status, fc.expires_at as fdx_consent_expires_at,
       fc.lookback_period as fdx_lookback_period, fc.resources as fdx_consent_resources
from oidc_models t
left join lateral (
  select a.client_id, a.subject_type, a.user_id, a.organization_id, a.expires_at, a.revoked_at
  from oauth_authorizations a where a.grant_id = t.grant_id and a.environment = t.environment
  offset 0
) a on true
left join organizations o on o.id = a.organization_id
left join users u on u.id = a.user_id
left join memberships m on m.user_id = a.user_id and m.organization_id = a.organization_id
left join lateral (
  select c.client_id, c.ip_allow_list, c.profile from oauth_clients c
  where c.client_id = t.payload->>'clientId' and c.environment = t.environment
  offset 0
) c on true
left join lateral (
  select fc.id, fc.status, fc.expires_at, fc.lookback_period, fc.resources from fdx_consents fc
  where fc.grant_id = t.grant_id and fc.environment = t.environment
  offset 0
) fc on true
where t.environment = ${environment} and t.model = 'AccessToken' and t.id = ${tokenHash}`,
  );
  return rows[0];
}

/** A data recipient's own client-credentials token (docs/bank-data.md, "Consent API") and its client. */
export interface ClientTokenRow {
  payload: StoredAccessToken;
  client_id: string | null;
  profile: string | null;
  ip_allow_list: string[] | null;
}

/** A client-credentials token by hash, with its client's registration (absent: the client was removed). */
export async function findClientTokenContext(db: Db, environment: Environment, tokenHash: string): Promise<ClientTokenRow | undefined> {
  const { rows } = await sql<ClientTokenRow>`select t.payload, c.client_id, c.profile, c.ip_allow_list
    from oidc_models t
    left join oauth_clients c on c.client_id = t.payload->>'clientId' and c.environment = t.environment
    where t.environment = ${environment} and t.model = 'ClientCredentials' and t.id = ${tokenHash}`.execute(db);
  return rows[0];
}

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  organization_kind: OrganizationKind;
}

export async function findLiveApiKey(db: Db, environment: Environment, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('organizations', 'organizations.id', 'api_keys.organization_id')
    .select(['api_keys.id', 'api_keys.organization_id', 'organizations.kind as organization_kind'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.environment', '=', environment)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function touchApiKey(db: Db, id: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: new Date() }).where('id', '=', id).execute();
}

export async function touchAuthorization(db: Db, grantId: string): Promise<void> {
  await db.updateTable('oauth_authorizations').set({ last_used_at: new Date() }).where('grant_id', '=', grantId).execute();
}

/** Whether an access token (by hash) is stored in `environment`: the other environment's, when unknown where it was sent. */
export async function accessTokenStoredIn(db: Db, environment: Environment, tokenHash: string): Promise<boolean> {
  const row = await db
    .selectFrom('oidc_models')
    .select('id')
    .where('environment', '=', environment)
    .where('model', '=', 'AccessToken')
    .where('id', '=', tokenHash)
    .executeTakeFirst();
  return row !== undefined;
}

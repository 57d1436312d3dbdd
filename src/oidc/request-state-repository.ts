import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { runPrepared } from '../db/prepared-statements.js';
import { hashedInSql } from '../db/provider-store.js';
import type { Environment } from '../db/schema.js';
import type { listMemberships } from '../accounts/repository.js';

/**
 * What a browser request of the authorization flow reads first, in one statement
 * (middleware/unit-of-work.ts): the Interaction its URL names, the Session bound to it, the
 * Session its cookie names, the Grant the Interaction's consent names, and the signed-in
 * user's identity and memberships. Each of these is otherwise one query of its own, made a
 * few milliseconds later in the same request.
 */

/** One organization a user belongs to, in the shape accounts/repository.ts listMemberships gives it. */
export type MembershipRow = Awaited<ReturnType<typeof listMemberships>>[number];

export interface RequestStateRow {
  i_payload: Record<string, unknown> | null;
  i_consumed_at: Date | null;
  us_id: string | null;
  us_payload: Record<string, unknown> | null;
  us_consumed_at: Date | null;
  cs_payload: Record<string, unknown> | null;
  cs_consumed_at: Date | null;
  g_id: string | null;
  g_payload: Record<string, unknown> | null;
  g_consumed_at: Date | null;
  u_id: string | null;
  u_email: string | null;
  u_display_name: string | null;
  u_disabled_at: Date | null;
  u_memberships: MembershipRow[] | null;
  u_credentials_epoch: number | null;
  /** The Interaction's sign-in result, if it has one, was proven under its user's current credentials epoch. */
  i_login_live: boolean;
  /** The Interaction's session and the cookie's still count (identity/sessions.ts): a record at the user's epoch. */
  us_live: boolean;
  cs_live: boolean;
}

// The payload fields read below (accountId, uid, session, result) are declared in db/provider-payload.ts.

/** The text form of a user id, cast only when it is one (a payload is not trusted to hold a uuid). */
const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** The user id in a payload's text, as a uuid when it is one (else null, which matches nothing). */
const userIdIn = (text: string) => sql.raw(`(case when ${text} ~ '${UUID}' then (${text})::uuid end)`);

/**
 * A signed-in Session counts while our record of it (browser_sessions) names its user at the
 * user's current credentials epoch, the user not disabled (docs/accounts.md, "Sessions"); one
 * that nobody signed in to has nothing to end.
 */
function sessionLive(environment: Environment, alias: string) {
  const account = `${alias}.payload->>'accountId'`;
  return sql`(${sql.raw(alias)}.payload is null or ${sql.raw(account)} is null or exists (
    select 1 from browser_sessions b join users bu on bu.id = b.user_id
    where b.environment = ${environment} and b.session_uid = ${sql.raw(alias)}.payload->>'uid' and b.user_id = ${userIdIn(account)}
      and b.credentials_epoch = bu.credentials_epoch and bu.disabled_at is null and b.expires_at > now()))`;
}

/**
 * The rows by hashed id (either may be null). The user is the one the Interaction's sign-in
 * names, else its Session's, else the cookie's Session's. Lookups behind `offset 0` stay index
 * probes keyed by the row before them (see unit-of-work-repository.ts).
 */
export async function readRequestState(
  db: Db,
  environment: Environment,
  ids: { interaction: string | null; session: string | null },
): Promise<RequestStateRow> {
  const [row] = await runPrepared(
    db,
    'request_state',
    sql<RequestStateRow>`
    select i.payload as i_payload, i.consumed_at as i_consumed_at,
           us.id as us_id, us.payload as us_payload, us.consumed_at as us_consumed_at,
           cs.payload as cs_payload, cs.consumed_at as cs_consumed_at,
           g.id as g_id, g.payload as g_payload, g.consumed_at as g_consumed_at,
           u.id as u_id, u.email as u_email, u.display_name as u_display_name, u.disabled_at as u_disabled_at, u.memberships as u_memberships,
           u.credentials_epoch as u_credentials_epoch,
           (i.payload->'result'->'login' is null or exists (
             select 1 from users lu
             where lu.id = ${userIdIn(`i.payload->'result'->'login'->>'accountId'`)}
               and lu.credentials_epoch::text = i.payload->'result'->'login'->>'epoch' and lu.disabled_at is null)) as i_login_live,
           ${sessionLive(environment, 'us')} as us_live,
           ${sessionLive(environment, 'cs')} as cs_live
    from (select 1) as request
    left join oidc_models i on i.environment = ${environment} and i.model = 'Interaction' and i.id = ${ids.interaction}::text
    left join oidc_models cs on cs.environment = ${environment} and cs.model = 'Session' and cs.id = ${ids.session}::text
    left join lateral (
      select s.id, s.payload, s.consumed_at from oidc_models s
      where s.environment = ${environment} and s.model = 'Session' and s.uid = i.payload->'session'->>'uid'
      limit 1
    ) us on true
    left join lateral (
      select g.id, g.payload, g.consumed_at from oidc_models g
      where g.environment = ${environment} and g.model = 'Grant' and g.id = ${hashedInSql(`i.payload->'result'->'consent'->>'grantId'`)}
      offset 0
    ) g on true
    left join lateral (
      select coalesce(i.payload->'result'->'login'->>'accountId', us.payload->>'accountId', cs.payload->>'accountId') as id
    ) named on true
    left join lateral (
      select u.id, u.email, u.display_name, u.disabled_at, u.credentials_epoch,
        (select coalesce(json_agg(json_build_object('id', o.id, 'name', o.name, 'ein', o.ein, 'kind', o.kind, 'role', m.role, 'require_mfa', o.require_mfa) order by o.name, o.id), '[]'::json)
         from memberships m join organizations o on o.id = m.organization_id where m.user_id = u.id) as memberships
      from users u
      where u.id = ${userIdIn('named.id')}
      offset 0
    ) u on true`,
  );
  return row!;
}

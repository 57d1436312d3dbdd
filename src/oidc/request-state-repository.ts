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
}

/** The text form of a user id, cast only when it is one (a payload is not trusted to hold a uuid). */
const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * The rows by hashed id (either may be null). The user is the one the Interaction's sign-in
 * names, else its Session's, else the cookie's Session's. Lookups behind `offset 0` stay index
 * probes keyed by the row before them (see unit-of-work-repository.ts).
 */
export async function readRequestState(db: Db, environment: Environment, ids: { interaction: string | null; session: string | null }): Promise<RequestStateRow> {
  const [row] = await runPrepared(
    db,
    'request_state',
    sql<RequestStateRow>`
    select i.payload as i_payload, i.consumed_at as i_consumed_at,
           us.id as us_id, us.payload as us_payload, us.consumed_at as us_consumed_at,
           cs.payload as cs_payload, cs.consumed_at as cs_consumed_at,
           g.id as g_id, g.payload as g_payload, g.consumed_at as g_consumed_at,
           u.id as u_id, u.email as u_email, u.display_name as u_display_name, u.disabled_at as u_disabled_at, u.memberships as u_memberships
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
      select u.id, u.email, u.display_name, u.disabled_at,
        (select coalesce(json_agg(json_build_object('id', o.id, 'name', o.name, 'ein', o.ein, 'kind', o.kind, 'role', m.role, 'require_mfa', o.require_mfa) order by o.name, o.id), '[]'::json)
         from memberships m join organizations o on o.id = m.organization_id where m.user_id = u.id) as memberships
      from users u
      where u.id = (case when named.id ~ ${UUID} then named.id::uuid end)
      offset 0
    ) u on true`,
  );
  return row!;
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { runPrepared } from '../db/prepared-statements.js';
import { hashedInSql, writeModels, type ModelWrite } from '../db/provider-store.js';
import type { AuthorizationContext } from '../authorizations/authorizations.js';
import type { UnitOfWork } from './unit-of-work.js';
import { inTransaction, type Executor } from '../db/executor.js';

/**
 * The unit of work's statements (unit-of-work.ts): the token request's read of a code or
 * refresh token with its Grant and authorization, and the one write of a unit.
 */

interface TokenWithGrantRow {
  payload: Record<string, unknown>;
  consumed_at: Date | null;
  grant_id: string | null;
  g_payload: Record<string, unknown> | null;
  g_consumed_at: Date | null;
  a_grant_id: string | null;
  subject_type: AuthorizationContext['subjectType'] | null;
  user_id: string | null;
  organization_id: string | null;
  scopes: string[] | null;
  revoked_at: Date | null;
  a_expires_at: Date | null;
  email: string | null;
  display_name: string | null;
  disabled_at: Date | null;
  role: AuthorizationContext['role'] | null;
}

/** A code or refresh token with its Grant and our authorization (and its approver), in one query. */
export async function findTokenWithGrant(
  db: Db,
  environment: Environment,
  model: string,
  hashedId: string,
): Promise<TokenWithGrantRow | undefined> {
  // Lateral lookups behind `offset 0` (which keeps the planner from flattening them) are index
  // probes keyed by this token's grant whatever the statistics say: with a young table's
  // estimates (a few rows) the flattened join scanned every Grant and filtered (29 ms at 5,000
  // Grants), and a prepared statement keeps the plan it chose.
  const rows = await runPrepared(
    db,
    'token_unit',
    sql<TokenWithGrantRow>`
    select t.payload, t.consumed_at, t.grant_id, g.g_payload, g.g_consumed_at, a.*
    from oidc_models t
    left join lateral (
      select g.payload as g_payload, g.consumed_at as g_consumed_at from oidc_models g
      where g.environment = t.environment and g.model = 'Grant' and g.id = ${hashedInSql('t.grant_id')}
      offset 0
    ) g on true
    left join lateral (
      select a.grant_id as a_grant_id, a.subject_type, a.user_id, a.organization_id, a.scopes, a.revoked_at,
             a.expires_at as a_expires_at, u.email, u.display_name, u.disabled_at, m.role
      from oauth_authorizations a
      join users u on u.id = a.user_id
      left join memberships m on m.user_id = a.user_id and m.organization_id = a.organization_id
      where a.grant_id = t.grant_id and a.environment = t.environment
      offset 0
    ) a on true
    where t.environment = ${environment} and t.model = ${model} and t.id = ${hashedId}`,
  );
  return rows[0];
}

/**
 * Writes a unit of work (unit-of-work.ts): its provider rows, audit rows, last_used_at and
 * the request's other writes, in one transaction. A unit with a deferred consume is written as
 * one statement whose every part is conditional on the consume: false when the code or
 * refresh token was already used, and then nothing was written. The one function that writes
 * a unit; late writes go straight to the database.
 */
export async function commitUnit(db: Db, environment: Environment, unit: UnitOfWork): Promise<boolean> {
  unit.closed = true;
  if (!unit.hasWrites) return true;
  const writes = unit.take();
  const conditional =
    unit.consume !== undefined || unit.audits.length > 0 || unit.usedGrantId !== undefined || unit.successor !== undefined;
  const write = async (executor: Executor): Promise<boolean> => {
    if (conditional) {
      if (!(await writeConsumed(executor, environment, unit, writes))) return false;
    } else await writeModels(executor, writes);
    for (const work of unit.together) await work(executor);
    return true;
  };
  return unit.together.length === 0 ? write(db) : inTransaction(db, write);
}

/** The consume, the deferred saves, the audit rows, last_used_at and a refresh's successor pair in one statement, all or nothing. */
async function writeConsumed(db: Executor, environment: Environment, unit: UnitOfWork, writes: readonly ModelWrite[]): Promise<boolean> {
  if (writes.some((w) => w.op === 'delete')) throw new Error('a unit with a deferred consume defers no delete');
  const consumed = unit.consume
    ? sql`update oidc_models set consumed_at = now()
          where environment = ${environment} and model = ${unit.consume.model} and id = ${unit.consume.id} and consumed_at is null
          returning 1`
    : sql`select 1`;
  const parts = [sql`consumed as (${consumed})`];
  const saves = writes.flatMap((w) => (w.op === 'upsert' ? [w.row] : []));
  if (saves.length > 0) {
    const values = saves.map(
      (r) =>
        sql`(${r.environment}, ${r.model}, ${r.id}, ${r.payload}::jsonb, ${r.grant_id}::text, ${r.uid}::text, ${r.expires_at}::timestamptz)`,
    );
    parts.push(sql`issued as (
      insert into oidc_models (environment, model, id, payload, grant_id, uid, expires_at)
      select v.* from (values ${sql.join(values)}) as v(environment, model, id, payload, grant_id, uid, expires_at)
      where exists (select 1 from consumed)
      on conflict (environment, model, id) do update
        set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid, expires_at = excluded.expires_at)`);
  }
  if (unit.audits.length > 0) {
    const values = unit.audits.map(
      (e) =>
        sql`(${e.event}, ${e.environment ?? null}::text, ${e.actorUserId ?? null}::uuid, ${e.organizationId ?? null}::uuid, ${e.clientId ?? null}::text, ${e.ip || null}::inet, ${e.requestId ?? null}::text, ${JSON.stringify(e.details ?? {})}::jsonb)`,
    );
    parts.push(sql`audited as (
      insert into audit_events (event, environment, actor_user_id, organization_id, client_id, ip, request_id, details)
      select v.* from (values ${sql.join(values)}) as v(event, environment, actor_user_id, organization_id, client_id, ip, request_id, details)
      where exists (select 1 from consumed))`);
  }
  if (unit.usedGrantId) {
    parts.push(sql`used as (
      update oauth_authorizations set last_used_at = now()
      where grant_id = ${unit.usedGrantId} and exists (select 1 from consumed))`);
  }
  if (unit.successor) {
    // The first pair stored for a token stays (a refresh's only one: its consume is the first).
    const { id, ciphertext, expiresAt } = unit.successor;
    parts.push(sql`succeeded as (
      insert into oidc_refresh_successors (environment, id, ciphertext, expires_at)
      select ${environment}::text, ${id}::text, ${ciphertext}::text, ${expiresAt}::timestamptz
      where exists (select 1 from consumed)
      on conflict (environment, id) do nothing)`);
  }
  const rows = await runPrepared(
    db,
    'token_unit',
    sql<{ ok: boolean }>`with ${sql.join(parts)} select exists (select 1 from consumed) as ok`,
  );
  return rows[0]?.ok === true;
}

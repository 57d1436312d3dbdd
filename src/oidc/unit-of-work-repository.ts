import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { piece, PreparedShapes, preparedText, runNamed, type PreparedText, type TextPiece } from '../db/prepared-statements.js';
import { hashedSqlText, writeModels, type ModelWrite } from '../db/provider-store.js';
import type { AuthorizationContext } from '../authorizations/authorizations.js';
import type { UnitOfWork } from './unit-of-work.js';
import { inTransaction, type Executor } from '../db/executor.js';

/**
 * The unit of work's statements (unit-of-work.ts): the token request's read of a code or
 * refresh token with its Grant and authorization, and the one write of a unit. Both run on
 * every token request, so their texts are built once (per shape) and sent by name
 * (prepared-statements.ts, runNamed): no Kysely compile and no hashing of the text per request.
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

// Lateral lookups behind `offset 0` (which keeps the planner from flattening them) are index
// probes keyed by this token's grant whatever the statistics say: with a young table's
// estimates (a few rows) the flattened join scanned every Grant and filtered (29 ms at 5,000
// Grants), and a prepared statement keeps the plan it chose.
const TOKEN_WITH_GRANT = preparedText('token_unit', [
  `
    select t.payload, t.consumed_at, t.grant_id, g.g_payload, g.g_consumed_at, a.*
    from oidc_models t
    left join lateral (
      select g.payload as g_payload, g.consumed_at as g_consumed_at from oidc_models g
      where g.environment = t.environment and g.model = 'Grant' and g.id = ${hashedSqlText('t.grant_id')}
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
    `,
  piece`where t.environment = ${'environment'} and t.model = ${'model'} and t.id = ${'hashedId'}`,
]);

/**
 * A code or refresh token with its Grant and our authorization (and its approver), in one
 * query: one text, built once and sent by name (prepared-statements.ts, runNamed).
 */
export async function findTokenWithGrant(
  db: Db,
  environment: Environment,
  model: string,
  hashedId: string,
): Promise<TokenWithGrantRow | undefined> {
  const rows = await runNamed<TokenWithGrantRow>(db, TOKEN_WITH_GRANT, [environment, model, hashedId]);
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

/** What writeConsumed's text varies with: the consume or not, how many saves and audit rows, the last_used_at bump or not, a successor or not. */
interface CommitShape {
  consume: boolean;
  saves: number;
  audits: number;
  used: boolean;
  successor: boolean;
}

/** writeConsumed's texts, one per shape, each built once (a token request's commit comes in a handful of shapes). */
const commitTexts = new PreparedShapes('token_unit');

/** The text of writeConsumed's statement for a shape (the same object for the same shape); writeConsumed passes its values in order. */
export function commitText(shape: CommitShape): PreparedText {
  const key = `c${+shape.consume}s${shape.saves}a${shape.audits}u${+shape.used}x${+shape.successor}`;
  return commitTexts.text(key, () => buildCommitText(shape));
}

function buildCommitText(shape: CommitShape): (TextPiece | string)[] {
  const text: (TextPiece | string)[] = ['with consumed as ('];
  text.push(
    shape.consume
      ? piece`update oidc_models set consumed_at = now()
          where environment = ${'environment'} and model = ${'model'} and id = ${'id'} and consumed_at is null
          returning 1`
      : 'select 1',
    ')',
  );
  if (shape.saves > 0) {
    const row = piece`(${'environment'}, ${'model'}, ${'id'}, ${'payload'}::jsonb, ${'grant_id'}::text, ${'uid'}::text, ${'expires_at'}::timestamptz)`;
    text.push(
      `, issued as (
      insert into oidc_models (environment, model, id, payload, grant_id, uid, expires_at)
      select v.* from (values `,
      ...separated(row, shape.saves),
      `) as v(environment, model, id, payload, grant_id, uid, expires_at)
      where exists (select 1 from consumed)
      on conflict (environment, model, id) do update
        set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid, expires_at = excluded.expires_at)`,
    );
  }
  if (shape.audits > 0) {
    const row = piece`(${'event'}, ${'environment'}::text, ${'actor_user_id'}::uuid, ${'organization_id'}::uuid, ${'client_id'}::text, ${'ip'}::inet, ${'request_id'}::text, ${'details'}::jsonb)`;
    text.push(
      `, audited as (
      insert into audit_events (event, environment, actor_user_id, organization_id, client_id, ip, request_id, details)
      select v.* from (values `,
      ...separated(row, shape.audits),
      `) as v(event, environment, actor_user_id, organization_id, client_id, ip, request_id, details)
      where exists (select 1 from consumed))`,
    );
  }
  if (shape.used)
    text.push(piece`, used as (
      update oauth_authorizations set last_used_at = now()
      where grant_id = ${'grant_id'} and exists (select 1 from consumed))`);
  // The first pair stored for a token stays (a refresh's only one: its consume is the first).
  if (shape.successor)
    text.push(piece`, succeeded as (
      insert into oidc_refresh_successors (environment, id, ciphertext, expires_at)
      select ${'environment'}::text, ${'id'}::text, ${'ciphertext'}::text, ${'expires_at'}::timestamptz
      where exists (select 1 from consumed)
      on conflict (environment, id) do nothing)`);
  text.push(' select exists (select 1 from consumed) as ok');
  return text;
}

/** `count` copies of a row's piece, comma separated. */
function separated(row: TextPiece, count: number): (TextPiece | string)[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? [row] : [', ', row])).flat();
}

/**
 * The consume, the deferred saves, the audit rows, last_used_at and a refresh's successor pair
 * in one statement, all or nothing: its shape's text (commitText) with this unit's values, in
 * the text's order.
 */
async function writeConsumed(db: Executor, environment: Environment, unit: UnitOfWork, writes: readonly ModelWrite[]): Promise<boolean> {
  if (writes.some((w) => w.op === 'delete')) throw new Error('a unit with a deferred consume defers no delete');
  const saves = writes.flatMap((w) => (w.op === 'upsert' ? [w.row] : []));
  const values: unknown[] = [];
  if (unit.consume) values.push(environment, unit.consume.model, unit.consume.id);
  for (const r of saves) values.push(r.environment, r.model, r.id, r.payload, r.grant_id, r.uid, r.expires_at);
  for (const e of unit.audits)
    values.push(
      e.event,
      e.environment ?? null,
      e.actorUserId ?? null,
      e.organizationId ?? null,
      e.clientId ?? null,
      e.ip || null,
      e.requestId ?? null,
      JSON.stringify(e.details ?? {}),
    );
  if (unit.usedGrantId) values.push(unit.usedGrantId);
  if (unit.successor) values.push(environment, unit.successor.id, unit.successor.ciphertext, unit.successor.expiresAt);
  const text = commitText({
    consume: unit.consume !== undefined,
    saves: saves.length,
    audits: unit.audits.length,
    used: Boolean(unit.usedGrantId),
    successor: unit.successor !== undefined,
  });
  const rows = await runNamed<{ ok: boolean }>(db, text, values);
  return rows[0]?.ok === true;
}

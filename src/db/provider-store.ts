import crypto from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Executor } from './executor.js';
import type { Db } from './database.js';
import type { Environment, OidcModelsTable } from './schema.js';

/**
 * The provider's stored tokens: the oidc_models table that oidc-provider's adapter
 * (oidc/adapter.ts) writes and the resource gateway reads access tokens from
 * (gateway/auth/credential-repository.ts). Both import this module, so the one place where
 * the authorization server and the gateway meet in the database shows in their imports: the
 * row type, how ids are hashed, and the adapter's queries live here.
 */

/**
 * How every bearer secret is stored: SHA-256, base64url. Provider ids (tokens, codes,
 * sessions) and lookups by the resource gateway use this one function.
 */
export function hashId(id: string): string {
  // One-shot: no Hash object per call (a token request hashes several ids).
  return crypto.hash('sha256', id, 'base64url');
}

/** hashId of a text column or expression, computed by PostgreSQL: for joins on a payload's raw id (as text, for a text built once). */
export const hashedSqlText = (expression: string) => `translate(encode(sha256(convert_to(${expression}, 'UTF8')), 'base64'), '+/=', '-_')`;
/** The same, for a `sql` template. */
export const hashedInSql = (expression: string) => sql.raw(hashedSqlText(expression));

/** One stored provider model (a token, code, Grant, Session, Interaction or revocation marker). */
type ProviderModelRow = Selectable<OidcModelsTable>;

/** What a read of one model yields: its payload and whether (when) it was consumed. */
export type StoredRow = Pick<ProviderModelRow, 'payload' | 'consumed_at'>;

/** An access token's payload as the provider stores it: the members the gateway reads. */
export interface StoredAccessToken {
  exp?: number;
  scope?: string;
  clientId?: string;
  accountId?: string;
  grantId?: string;
  kind?: string;
  /** The JWK thumbprint of the DPoP key the token is bound to (RFC 9449 6), when it is. */
  jkt?: string;
}

/** A row as the adapter writes it: the id already hashed, the payload as JSON text. */
export interface NewModelRow {
  environment: Environment;
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  expires_at: Date | null;
}

export async function upsertModel(db: Db, row: NewModelRow): Promise<void> {
  await db
    .insertInto('oidc_models')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['environment', 'model', 'id'])
        .doUpdateSet({ payload: row.payload, grant_id: row.grant_id, uid: row.uid, expires_at: row.expires_at }),
    )
    .execute();
}

function modelsOf(db: Db, environment: Environment, model: string) {
  return db.selectFrom('oidc_models').where('environment', '=', environment).where('model', '=', model);
}

export function findModel(db: Db, environment: Environment, model: string, hashedId: string): Promise<StoredRow | undefined> {
  return modelsOf(db, environment, model).select(['payload', 'consumed_at']).where('id', '=', hashedId).executeTakeFirst();
}

export function findModelByUid(db: Db, environment: Environment, model: string, uid: string): Promise<StoredRow | undefined> {
  return modelsOf(db, environment, model).select(['payload', 'consumed_at']).where('uid', '=', uid).executeTakeFirst();
}

/** A save or a delete of one model row, as a request's unit of work collects them. */
export type ModelWrite = { op: 'upsert'; row: NewModelRow } | { op: 'delete'; environment: Environment; model: string; id: string };

/**
 * Several saves and deletes in one statement (one commit). Each row is written at most once
 * here (the caller keeps the last write of each), so the deletes and inserts never meet.
 */
export async function writeModels(db: Executor, writes: readonly ModelWrite[]): Promise<void> {
  const deletes = writes.flatMap((w) => (w.op === 'delete' ? [sql`(${w.environment}::text, ${w.model}::text, ${w.id}::text)`] : []));
  const upserts = writes.flatMap((w) =>
    w.op === 'upsert'
      ? [
          sql`(${w.row.environment}::text, ${w.row.model}::text, ${w.row.id}::text, ${w.row.payload}::jsonb, ${w.row.grant_id}::text, ${w.row.uid}::text, ${w.row.expires_at}::timestamptz)`,
        ]
      : [],
  );
  if (deletes.length === 0 && upserts.length === 0) return;
  const parts = [];
  if (deletes.length > 0) {
    parts.push(sql`deleted as (delete from oidc_models where (environment, model, id) in (values ${sql.join(deletes)}))`);
  }
  if (upserts.length > 0) {
    parts.push(sql`saved as (
      insert into oidc_models (environment, model, id, payload, grant_id, uid, expires_at)
      select v.* from (values ${sql.join(upserts)}) as v(environment, model, id, payload, grant_id, uid, expires_at)
      on conflict (environment, model, id) do update
        set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid, expires_at = excluded.expires_at)`);
  }
  await sql`with ${sql.join(parts)} select 1`.execute(db);
}

/** When a model (a refresh token) was consumed; undefined when it does not exist. */
export async function findConsumedAt(db: Db, environment: Environment, model: string, hashedId: string): Promise<Date | null | undefined> {
  return (
    await db
      .selectFrom('oidc_models')
      .select('consumed_at')
      .where('environment', '=', environment)
      .where('model', '=', model)
      .where('id', '=', hashedId)
      .executeTakeFirst()
  )?.consumed_at;
}

/** The grant and consume time of a model, read after a lost race to consume it. */
export function findConsumeState(db: Db, environment: Environment, model: string, hashedId: string) {
  return db
    .selectFrom('oidc_models')
    .select(['grant_id', 'consumed_at'])
    .where('environment', '=', environment)
    .where('model', '=', model)
    .where('id', '=', hashedId)
    .executeTakeFirst();
}

/** Marks a code or refresh token used unless it already was; false when another use won. */
export async function consumeModel(db: Executor, environment: Environment, model: string, hashedId: string): Promise<boolean> {
  const updated = await db
    .updateTable('oidc_models')
    .set({ consumed_at: sql<Date>`now()` })
    .where('environment', '=', environment)
    .where('model', '=', model)
    .where('id', '=', hashedId)
    .where('consumed_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/**
 * Uses up a pushed authorization request (its raw id), conditionally: false when it was used
 * already (or is unknown). The consent step's approval calls it in its transaction.
 */
export async function consumePushedRequest(db: Executor, environment: Environment, id: string): Promise<boolean> {
  return consumeModel(db, environment, 'PushedAuthorizationRequest', hashId(id));
}

export async function deleteModel(db: Executor, environment: Environment, model: string, hashedId: string): Promise<void> {
  await db.deleteFrom('oidc_models').where('environment', '=', environment).where('model', '=', model).where('id', '=', hashedId).execute();
}

/** Deletes expired rows in batches; expired rows are kept a day so late lookups can explain themselves. */
export async function sweepExpired(db: Db, batchSize = 1000, graceSeconds = 86_400): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql<{ count: string }>`
      with doomed as (
        select environment, model, id from oidc_models
        where expires_at < now() - make_interval(secs => ${graceSeconds})
        limit ${batchSize}
      )
      delete from oidc_models m using doomed d
      where m.environment = d.environment and m.model = d.model and m.id = d.id`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/** Moves a stored token's expiry (payload exp, declared in provider-payload.ts, and expires_at together); for a refresh token that slides. */
export async function setModelExpiry(db: Executor, environment: Environment, model: string, hashedId: string, exp: number): Promise<void> {
  await sql`update oidc_models set expires_at = to_timestamp(${exp}), payload = jsonb_set(payload, '{exp}', to_jsonb(${exp}::bigint))
    where environment = ${environment} and model = ${model} and id = ${hashedId} and consumed_at is null`.execute(db);
}

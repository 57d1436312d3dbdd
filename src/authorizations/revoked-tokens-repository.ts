import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { Executor } from '../db/executor.js';

/**
 * Revoking an authorization deletes its tokens, so a revoked refresh token would later look
 * like one never issued. What is deleted by revocation leaves a marker instead: a row of model
 * RevokedToken under the same hashed id, holding only which kind of token it was and its
 * client, which expires (and is swept) when the token would have. The token endpoint reads it
 * to say "revoked" rather than "unknown" (grant-refusals.ts). The marker is no credential: the
 * provider never looks up this model, and the raw value is not stored. The token's client is its
 * stored payload's clientId (db/provider-payload.ts).
 */
export const REVOKED_MODEL = 'RevokedToken';
/** The kinds a client presents at the token endpoint. */
const EXPLAINED = ['RefreshToken', 'AuthorizationCode'];

function markDeleted(environment: Environment, deleted: ReturnType<typeof sql>) {
  return sql`
    with gone as (${deleted} returning model, id, payload->>'clientId' as client_id, expires_at)
    insert into oidc_models (environment, model, id, payload, expires_at)
    select ${environment}, ${REVOKED_MODEL}, id, jsonb_build_object('model', model, 'clientId', client_id), expires_at
    from gone where model in (${sql.join(EXPLAINED)})
    on conflict (environment, model, id) do nothing`;
}

/** Deletes the tokens of the given models that a grant issued, leaving markers. One statement. */
export async function deleteGrantTokens(db: Executor, environment: Environment, models: readonly string[], grantId: string): Promise<void> {
  await markDeleted(
    environment,
    sql`delete from oidc_models where environment = ${environment} and model in (${sql.join([...models])}) and grant_id = ${grantId}`,
  ).execute(db);
}

/** Deletes one token by its hashed id, leaving a marker (a revoked or replayed refresh token). */
export async function deleteToken(db: Executor, environment: Environment, model: string, hashedId: string): Promise<void> {
  await markDeleted(
    environment,
    sql`delete from oidc_models where environment = ${environment} and model = ${model} and id = ${hashedId}`,
  ).execute(db);
}

/** The marker left under this hashed id, if any: which kind of token it was, and its client. */
export async function findRevocationMarker(
  db: Db,
  environment: Environment,
  hashedId: string,
): Promise<{ model?: string; clientId?: string } | undefined> {
  const row = await db
    .selectFrom('oidc_models')
    .select('payload')
    .where('environment', '=', environment)
    .where('model', '=', REVOKED_MODEL)
    .where('id', '=', hashedId)
    .executeTakeFirst();
  return row?.payload as { model?: string; clientId?: string } | undefined;
}

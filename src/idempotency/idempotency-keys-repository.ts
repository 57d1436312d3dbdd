import { sql } from 'kysely';
import type { Executor, Trx } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/** The idempotency_keys table (docs/api.md, "Idempotency"). */

export interface KeyId {
  environment: Environment;
  organizationId: string;
  key: string;
}

export interface KeyRow {
  operation: string;
  fingerprint: string;
  status: number | null;
  body_sealed: string | null;
  location: string | null;
  /** Stored within the replay window (24 hours). */
  fresh: boolean;
}

/** How long a stored answer is replayed; older keys run afresh and are swept. */
export const REPLAY_WINDOW = '24 hours';

/**
 * Claims the key's row if there is none, then locks it. A concurrent request with the same key
 * waits here (on the insert's unique check, then on the row lock) until the first commits or
 * rolls back, and then sees its answer, or a free key.
 */
export async function claimAndLock(trx: Trx, id: KeyId, operation: string, fingerprint: string): Promise<KeyRow> {
  await sql`
    insert into idempotency_keys (environment, organization_id, key, operation, fingerprint)
    values (${id.environment}, ${id.organizationId}, ${id.key}, ${operation}, ${fingerprint})
    on conflict (environment, organization_id, key) do nothing`.execute(trx);
  const { rows } = await sql<KeyRow>`
    select operation, fingerprint, status, body_sealed, location,
           created_at > now() - ${REPLAY_WINDOW}::interval as fresh
      from idempotency_keys
     where environment = ${id.environment} and organization_id = ${id.organizationId} and key = ${id.key}
       for update`.execute(trx);
  return rows[0]!;
}

/** Makes a locked row the key of a new request (its old answer expired, or it holds none). */
export async function restartKey(trx: Trx, id: KeyId, operation: string, fingerprint: string): Promise<void> {
  await sql`
    update idempotency_keys
       set operation = ${operation}, fingerprint = ${fingerprint}, status = null, body_sealed = null, location = null,
           created_at = now()
     where environment = ${id.environment} and organization_id = ${id.organizationId} and key = ${id.key}`.execute(trx);
}

/** Stores the answer on the locked row, to commit with what the request did. */
export async function storeAnswer(
  trx: Trx,
  id: KeyId,
  answer: { status: number; bodySealed: string; location: string | null },
): Promise<void> {
  await trx
    .updateTable('idempotency_keys')
    .set({ status: answer.status, body_sealed: answer.bodySealed, location: answer.location })
    .where('environment', '=', id.environment)
    .where('organization_id', '=', id.organizationId)
    .where('key', '=', id.key)
    .execute();
}

/** Deletes keys past the replay window; returns how many. */
export async function sweepIdempotencyKeys(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', sql<Date>`now() - ${REPLAY_WINDOW}::interval`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

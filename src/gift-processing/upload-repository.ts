import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/** The lockbox provider's side of mail batches: their creation and their upload (docs/gift-processing.md, "Object storage"). */

/** The provider's lockbox at `locationId` in one environment. */
export function findProviderLockbox(db: Executor, providerId: string, environment: Environment, locationId: string) {
  return db
    .selectFrom('lockboxes')
    .select(['id', 'organization_id'])
    .where('provider_organization_id', '=', providerId)
    .where('environment', '=', environment)
    .where('location_id', '=', locationId)
    .executeTakeFirst();
}

export function insertMailBatch(
  db: Executor,
  values: { id: string; environment: Environment; providerId: string; lockboxId: string; storageKey: string; uploadExpiresAt: Date },
) {
  return db
    .insertInto('mail_batches')
    .values({
      id: values.id,
      environment: values.environment,
      provider_organization_id: values.providerId,
      lockbox_id: values.lockboxId,
      storage_key: values.storageKey,
      upload_expires_at: values.uploadExpiresAt,
    })
    .returning(['id', 'storage_key', 'upload_expires_at'])
    .executeTakeFirstOrThrow();
}

export function findMailBatch(db: Executor, id: string) {
  return db
    .selectFrom('mail_batches')
    .select(['id', 'environment', 'status', 'storage_key', 'upload_expires_at', 'lease_until'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Claims an awaiting batch for one upload through Almoner (the folder storage's PUT) until
 * `until`: a second PUT meanwhile is refused, so two bodies never race for the same object.
 * The ingestion job leaves an awaiting batch alone while its lease runs.
 */
export async function claimBatchUpload(db: Executor, id: string, until: Date): Promise<boolean> {
  const row = await db
    .updateTable('mail_batches')
    .set({ lease_until: until, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_upload')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives the claim back (the upload failed: the batch awaits another). */
export async function releaseBatchUpload(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('mail_batches')
    .set({ lease_until: null, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_upload')
    .execute();
}

/** The upload is stored: the batch is `uploaded`, for the ingestion job. False when it no longer awaited one. */
export async function markBatchUploaded(db: Executor, id: string, sizeBytes: number): Promise<boolean> {
  const row = await db
    .updateTable('mail_batches')
    .set({ status: 'uploaded', size_bytes: sizeBytes, uploaded_at: sql<Date>`now()`, lease_until: null, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_upload')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

import { sql } from 'kysely';
import { addOrganization } from '../../src/accounts/service.js';
import type { Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import { encodeCursor } from '../../src/gateway/routing/pagination.js';
import { createTestLockbox, type TestLockbox } from '../../test/helpers/gift.js';

/**
 * The gift-processing lists scenario's rows (docs/benchmarks.md, "Gift processing"): a lockbox
 * of a bench lockbox provider for the nonprofit under test, one ingested batch, and `count`
 * mail items (each with one scan) and `count` deposits (each a check deposit), written as rows,
 * as ingestion writes them; ids shaped as Almoner's, created over the last `count` minutes.
 */
export async function seedGiftRecords(db: Db, nonprofitId: string, providerEin: string, count: number): Promise<TestLockbox> {
  const provider = await addOrganization(db, { ein: providerEin, name: `Bench Lockbox Provider ${providerEin}`, kind: 'lockbox_provider' });
  const lockbox = await createTestLockbox(db, { nonprofitId, providerId: provider.id });
  const batchId = prefixedId('batch');
  await createBenchUlid(db);
  await sql`insert into mail_batches (id, environment, provider_organization_id, lockbox_id, storage_key, upload_expires_at, status, size_bytes, sha256, uploaded_at, ingested_at)
    values (${batchId}, 'sandbox', ${provider.id}::uuid, ${lockbox.id}, ${`batches/${batchId}.zip`}, now(), 'ingested', 1, repeat('0', 64), now(), now())`.execute(
    db,
  );
  await sql`insert into mail_items (id, environment, organization_id, lockbox_id, batch_id, envelope_id, status, received_at, created_at, updated_at)
    select 'mail_' || bench_ulid(), 'sandbox', ${nonprofitId}::uuid, ${lockbox.id}, ${batchId}, 'env-' || n,
           (array['processed','processed','processed','needs_review','rejected'])[1 + n % 5],
           now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n)
      from generate_series(1, ${count}) as n`.execute(db);
  await sql`insert into mail_item_scans (file_id, mail_item_id, batch_id, digest, created_at)
    select 'file_' || bench_ulid(), id, batch_id, encode(sha256(id::bytea), 'hex'), created_at
      from mail_items where batch_id = ${batchId}`.execute(db);
  await sql`insert into deposits (id, environment, organization_id, payment_source_id, financial_account_id, status, amount, rail, rail_details, settled_at, bank_created_at, created_at, updated_at)
    select 'deposit_' || bench_ulid(), 'sandbox', ${nonprofitId}::uuid, ${lockbox.paymentSourceId}, ${lockbox.financialAccountId}, 'complete',
           2500 + (n % 400) * 100, 'check_deposit',
           jsonb_build_object('status', 'deposited', 'submitted_at', to_char((now() - make_interval(mins => n)) at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
           now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n)
      from generate_series(1, ${count}) as n`.execute(db);
  return lockbox;
}

/** bench_ulid(): 26 random Crockford base32 characters, as Almoner's ids have (their time part does not matter here). */
async function createBenchUlid(db: Db): Promise<void> {
  await sql`create or replace function bench_ulid() returns text language sql volatile as $$
    select string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', 1 + floor(random() * 32)::int, 1), '')
      from generate_series(1, 26) $$`.execute(db);
}

/** Page tokens of `table` (the gateway's cursor format) at random places of the nonprofit's rows. */
export async function giftPageTokens(db: Db, table: 'mail_items' | 'deposits', organizationId: string, n: number): Promise<string[]> {
  const { rows } = await sql<{ created_at: Date; id: string }>`select created_at, id from ${sql.table(table)}
    where organization_id = ${organizationId} and environment = 'sandbox' order by random() limit ${n}`.execute(db);
  return rows.map((row) => encodeCursor({ createdAt: row.created_at, id: row.id }));
}

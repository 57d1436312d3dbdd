import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { giftParties } from '../helpers/gift.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe('the gift-processing test fixture', () => {
  it('makes a lockbox on the nonprofit processing account, fulfilled for the provider', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const row = await t.db.selectFrom('lockboxes').selectAll().where('id', '=', lockbox.id).executeTakeFirstOrThrow();
    expect(row.organization_id).toBe(nonprofit.id);
    expect(row.provider_organization_id).toBe(provider.id);
    expect(row.location_id).toMatch(/^po_\d+$/);
    const source = await t.db.selectFrom('payment_sources').selectAll().where('id', '=', lockbox.paymentSourceId).executeTakeFirstOrThrow();
    expect(source.source_type).toBe('lockbox');
    const request = await t.db.selectFrom('lockbox_requests').selectAll().where('lockbox_id', '=', lockbox.id).executeTakeFirstOrThrow();
    expect(request.fulfilled_at).not.toBeNull();
  });
});

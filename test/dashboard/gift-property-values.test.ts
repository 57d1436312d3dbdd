import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { appStorage, giftStaff, seedMailItem, seedProperty } from '../helpers/gift-dashboard.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Property values on the Deposits and Mail pages (docs/gift-processing.md, "On the
 * dashboard"): a deposit's own and its donations' values, as their members read them.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

async function setting() {
  const staff = await giftStaff(t.db);
  const storage = appStorage(server.config.data_dir);
  const seed = (input: Omit<Parameters<typeof seedMailItem>[2], 'nonprofitId' | 'providerId' | 'lockbox'>) =>
    seedMailItem(t.db, storage, { nonprofitId: staff.nonprofit.id, providerId: staff.provider.id, lockbox: staff.lockbox, ...input });
  return { ...staff, seed };
}

describe('properties on the pages', () => {
  it('show a deposit’s and its donations’ property values (enum option names, Yes/No, text, members’ addresses, days)', async () => {
    const s = await setting();
    const item = await s.seed({ donations: [{ amount: 5_000, donor: 'Ada Donor', memo: 'gala' }], deposit: {} });
    await seedProperty(t.db, {
      nonprofitId: s.nonprofit.id,
      name: 'Reconciled',
      resourceType: 'deposit',
      type: 'boolean',
      values: [{ resourceId: item.depositId!, value: { type: 'boolean', boolean_value: true } }],
    });
    const campaign = await seedProperty(t.db, {
      nonprofitId: s.nonprofit.id,
      name: 'Campaign',
      resourceType: 'donation',
      type: 'enum',
      options: ['Spring appeal', 'Year end'],
    });
    await t.db
      .insertInto('property_assignments')
      .values({
        property_id: campaign.id,
        resource_type: 'donation',
        resource_id: item.donationIds[0]!,
        value: JSON.stringify({ type: 'enum', enum_value_id: campaign.optionIds[1] }),
      })
      .execute();
    await seedProperty(t.db, { nonprofitId: s.nonprofit.id, name: 'Thank-you note', resourceType: 'donation', type: 'text' });
    await seedProperty(t.db, {
      nonprofitId: s.nonprofit.id,
      name: 'Thanked by',
      resourceType: 'donation',
      type: 'user',
      values: [{ resourceId: item.donationIds[0]!, value: { type: 'user', user_value_id: s.users.admin.id } }],
    });
    await seedProperty(t.db, {
      nonprofitId: s.nonprofit.id,
      name: 'Received on',
      resourceType: 'deposit',
      type: 'date',
      values: [{ resourceId: item.depositId!, value: { type: 'date', date_value: '2026-11-30T00:00:00Z' } }],
    });
    const reader = await dashboardSession(server, 'sandbox', s.users.read_only);
    const deposit = await reader.get(`/orgs/${s.ein}/deposits/${item.depositId!}`);
    expect(deposit.html).toMatch(/<li><span>Reconciled<\/span> Yes/);
    expect(deposit.html).toMatch(/<li><span>Campaign<\/span> Year end/);
    expect(deposit.html).toMatch(/<li><span>Thank-you note<\/span> —/);
    // A member's address, not their id; a date as its day.
    expect(deposit.html).toContain(`<li><span>Thanked by</span> ${s.users.admin.email}`);
    expect(deposit.html).toMatch(/<li><span>Received on<\/span> 2026-11-30/);
    // Read-only users see values, never a form to change them.
    expect(deposit.html).not.toContain('/properties"');
    const mail = await reader.get(`/orgs/${s.ein}/mail/${item.id}`);
    expect(mail.html).toMatch(/<li><span>Campaign<\/span> Year end/);
    expect(mail.html).not.toContain('Reconciled');
  });
});

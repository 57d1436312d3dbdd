import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { appStorage, giftStaff, seedMailItem, seedProperty } from '../helpers/gift-dashboard.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Setting property values from the Deposits and Mail pages (docs/gift-processing.md, "On the
 * dashboard"): a CSRF-protected form of Owners, Admins and Members on a deposit or one of the
 * donations the page shows, assigned as the API's assignment does; Read-only users see values
 * only; a value the property does not take is refused on the page, a resource not on it is 404.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

async function setting() {
  const s = await giftStaff(t.db);
  const item = await seedMailItem(t.db, appStorage(server.config.data_dir), {
    nonprofitId: s.nonprofit.id,
    providerId: s.provider.id,
    lockbox: s.lockbox,
    donations: [
      { amount: 5_000, donor: 'Ada Donor', memo: 'gala' },
      { amount: 2_500, donor: 'Grace Hopper', memo: '' },
    ],
    deposit: {},
  });
  const reconciled = await seedProperty(t.db, {
    nonprofitId: s.nonprofit.id,
    name: 'Reconciled',
    resourceType: 'deposit',
    type: 'boolean',
  });
  const campaign = await seedProperty(t.db, {
    nonprofitId: s.nonprofit.id,
    name: 'Campaign',
    resourceType: 'donation',
    type: 'enum',
    options: ['Spring appeal', 'Year end'],
  });
  const thanked = await seedProperty(t.db, { nonprofitId: s.nonprofit.id, name: 'Thanked on', resourceType: 'donation', type: 'date' });
  return { ...s, item, reconciled, campaign, thanked };
}

const valueOf = (propertyId: string, resourceId: string) =>
  t.db
    .selectFrom('property_assignments')
    .select('value')
    .where('property_id', '=', propertyId)
    .where('resource_id', '=', resourceId)
    .executeTakeFirst()
    .then((row) => row?.value);

describe('setting property values on the pages', () => {
  it('lets a Member set a deposit’s and a donation’s values; the page says so and shows them; No value removes one', async () => {
    const s = await setting();
    const member = await dashboardSession(server, 'sandbox', s.users.member);
    const depositPath = `/orgs/${s.ein}/deposits/${s.item.depositId!}`;
    const page = await member.get(depositPath);
    expect(page.html).toContain('<label for="prop-');
    const set = await member.browser.submit(page, `${depositPath}/properties`, {
      resource: s.item.depositId!,
      property: s.reconciled.id,
      value: 'true',
    });
    expect(set.url.pathname).toBe(depositPath);
    expect(set.html).toContain('Reconciled is set.');
    expect(set.html).toMatch(/<li><span>Reconciled<\/span> Yes/);
    expect(await valueOf(s.reconciled.id, s.item.depositId!)).toEqual({ type: 'boolean', boolean_value: true });

    const mailPath = `/orgs/${s.ein}/mail/${s.item.id}`;
    const mail = await member.get(mailPath);
    const donation = s.item.donationIds[1]!;
    const enumSet = await member.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: s.campaign.id,
      value: s.campaign.optionIds[1]!,
    });
    expect(enumSet.html).toContain('Campaign is set.');
    expect(enumSet.html).toMatch(/<li><span>Campaign<\/span> Year end/);
    const dateSet = await member.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: s.thanked.id,
      value: '2026-12-01',
    });
    expect(dateSet.html).toMatch(/<li><span>Thanked on<\/span> 2026-12-01/);
    expect(await valueOf(s.thanked.id, donation)).toEqual({ type: 'date', date_value: '2026-12-01T00:00:00Z' });
    // The other donation is untouched.
    expect(await valueOf(s.campaign.id, s.item.donationIds[0]!)).toBeUndefined();

    const cleared = await member.browser.submit(mail, `${mailPath}/properties`, { resource: donation, property: s.campaign.id, value: '' });
    expect(cleared.status).toBe(200);
    expect(await valueOf(s.campaign.id, donation)).toBeUndefined();
  });

  it('refuses a value the property does not take on the page (400), and a resource or property not on the page (404)', async () => {
    const s = await setting();
    const other = await setting();
    const admin = await dashboardSession(server, 'sandbox', s.users.admin);
    const mailPath = `/orgs/${s.ein}/mail/${s.item.id}`;
    const mail = await admin.get(mailPath);
    const donation = s.item.donationIds[0]!;
    const badOption = await admin.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: s.campaign.id,
      value: other.campaign.optionIds[0]!,
    });
    expect(badOption.status).toBe(400);
    expect(badOption.html).toContain('Campaign: not one of its options');
    const badDate = await admin.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: s.thanked.id,
      value: '2026-02-30',
    });
    expect(badDate.status).toBe(400);
    expect(await valueOf(s.thanked.id, donation)).toBeUndefined();
    // Another nonprofit's donation, or property, through this page: not on it.
    const foreignDonation = await admin.browser.submit(mail, `${mailPath}/properties`, {
      resource: other.item.donationIds[0]!,
      property: s.campaign.id,
      value: '',
    });
    expect(foreignDonation.status).toBe(404);
    const foreignProperty = await admin.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: other.campaign.id,
      value: other.campaign.optionIds[0]!,
    });
    expect(foreignProperty.status).toBe(404);
    // A deposit's property on a donation: not one of the donation's.
    const wrongKind = await admin.browser.submit(mail, `${mailPath}/properties`, {
      resource: donation,
      property: s.reconciled.id,
      value: 'true',
    });
    expect(wrongKind.status).toBe(404);
    expect(await valueOf(s.reconciled.id, donation)).toBeUndefined();
  });

  it('shows Read-only users values without forms and answers their posts 403; a post without the CSRF token is 403', async () => {
    const s = await setting();
    const reader = await dashboardSession(server, 'sandbox', s.users.read_only);
    const depositPath = `/orgs/${s.ein}/deposits/${s.item.depositId!}`;
    const page = await reader.get(depositPath);
    expect(page.html).toContain('Reconciled');
    expect(page.html).not.toContain(`${depositPath}/properties`);
    const post = await reader.browser.request(`${reader.origin}${depositPath}/properties`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), resource: s.item.depositId!, property: s.reconciled.id, value: 'true' },
    });
    expect(post.status).toBe(403);
    const owner = await dashboardSession(server, 'sandbox', s.users.owner);
    const forged = await owner.browser.request(`${owner.origin}${depositPath}/properties`, {
      method: 'POST',
      form: { csrf: 'forged', resource: s.item.depositId!, property: s.reconciled.id, value: 'true' },
    });
    expect(forged.status).toBe(403);
    expect(await valueOf(s.reconciled.id, s.item.depositId!)).toBeUndefined();
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { addProperty } from '../../src/gift-processing/properties-service.js';
import { accessToken, apiGet, apiKeyFor, apiRequest } from '../helpers/gateway.js';
import { createTestLockbox, giftParties, type TestLockbox } from '../helpers/gift.js';
import { insertDeposit, insertDonation } from '../helpers/gift-records.js';
import { givingCaller } from '../helpers/giving.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Properties, their options and assignProperty (docs/gift-processing.md, "The API", Assigning a property). */

const REDIRECT = 'https://app.example.org/callback';
const probe = new StatementProbe();
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  plugins: [probe],
  clients: { client: { environment: 'sandbox', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid'] } },
});

let key: string;
let lockbox: TestLockbox;
let other: Awaited<ReturnType<typeof giftParties>>;
let fund: { id: string; options: string[] };
let reviewer: string;
let received: string;
let note: string;
let donations: string[];
let deposit: string;

beforeAll(async () => {
  key = await apiKeyFor(t.db, staff, 'sandbox');
  const provider = await givingCaller(t.db, '72-3000002', 'Harbor Lockbox Services', 'lockbox_provider');
  lockbox = await createTestLockbox(t.db, { nonprofitId: staff.orgId, providerId: provider.id });
  other = await giftParties(t.db);
  const scope = { organizationId: staff.orgId, environment: 'sandbox' as const, via: 'admin_cli' as const };
  const names = Array.from({ length: 30 }, (_, i) => `Fund ${String(i + 1).padStart(2, '0')}`);
  const made = await addProperty(t.db, { ...scope, name: 'Fund', resourceType: 'donation', propertyType: 'enum', options: names });
  fund = { id: made.property.id, options: made.options };
  reviewer = (await addProperty(t.db, { ...scope, name: 'Reviewer', resourceType: 'donation', propertyType: 'user' })).property.id;
  received = (await addProperty(t.db, { ...scope, name: 'Received on', resourceType: 'deposit', propertyType: 'date' })).property.id;
  note = (await addProperty(t.db, { ...scope, name: 'Note', resourceType: 'donation', propertyType: 'text' })).property.id;
  const base = Date.now() - 3_600_000;
  donations = [
    await insertDonation(t.db, { nonprofitId: staff.orgId, paymentSourceId: lockbox.paymentSourceId, createdAt: new Date(base) }),
    await insertDonation(t.db, { nonprofitId: staff.orgId, paymentSourceId: lockbox.paymentSourceId, createdAt: new Date(base + 1000) }),
  ];
  deposit = await insertDeposit(t.db, {
    nonprofitId: staff.orgId,
    paymentSourceId: lockbox.paymentSourceId,
    financialAccountId: lockbox.financialAccountId,
  });
});

const get = (path: string, bearer = key) => apiGet(server, 'sandbox', path, { bearer });
const assign = (propertyId: string, json: unknown, bearer = key) =>
  apiRequest(server, 'sandbox', 'POST', `/v1/properties/${propertyId}/assign`, { bearer, json });
const updatedEvents = (objectId: string, category: string) =>
  t.db.selectFrom('events').select('id').where('associated_object_id', '=', objectId).where('category', '=', category).execute();

describe('properties and their options', () => {
  it('gets an enum property with its first 25 options and the total; pages the options in order', async () => {
    const one = await get(`/v1/properties/${fund.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: fund.id, name: 'Fund', resource_type: 'donation', property_type: 'enum', total_option_count: 30 });
    expect((one.body.options as { id: string }[]).map((o) => o.id)).toEqual(fund.options.slice(0, 25));
    const first = await get(`/v1/properties/${fund.id}/options?limit=20`);
    const second = await get(`/v1/properties/${fund.id}/options?limit=20&page_token=${String(first.body.next_page_token)}`);
    const ids = [...(first.body.results as { id: string }[]), ...(second.body.results as { id: string }[])].map((o) => o.id);
    expect(ids).toEqual(fund.options);
    expect(second.body.next_page_token).toBeUndefined();
    expect((await get(`/v1/properties/${fund.id}/options?page_token=bogus`)).status).toBe(400);
  });

  it('gives a user property the organization’s members as its options', async () => {
    const one = await get(`/v1/properties/${reviewer}`);
    expect(one.body.total_option_count).toBe(4);
    const memberIds = Object.values(staff.users).map((u) => u.id);
    expect((one.body.options as { id: string }[]).map((o) => o.id).sort()).toEqual([...memberIds].sort());
    const paged = await get(`/v1/properties/${reviewer}/options?limit=3`);
    const rest = await get(`/v1/properties/${reviewer}/options?limit=3&page_token=${String(paged.body.next_page_token)}`);
    expect([...(paged.body.results as { id: string }[]), ...(rest.body.results as { id: string }[])].map((o) => o.id).sort()).toEqual(
      [...memberIds].sort(),
    );
    // A text property has no options.
    expect((await get(`/v1/properties/${note}`)).body.options).toBeUndefined();
  });

  it('lists newest first, filtered by resource_type; another organization’s property is 404', async () => {
    const all = await get('/v1/properties');
    expect((all.body.results as { id: string }[]).map((p) => p.id)).toEqual([note, received, reviewer, fund.id]);
    const onDeposits = await get('/v1/properties?resource_type=deposit');
    expect((onDeposits.body.results as { id: string }[]).map((p) => p.id)).toEqual([received]);
    expect((await get('/v1/properties?resource_type=grant')).status).toBe(400);
    expect((await get(`/v1/properties/${fund.id}`, other.nonprofit.sandbox)).status).toBe(404);
    expect((await get(`/v1/properties/${fund.id}/options`, other.nonprofit.sandbox)).status).toBe(404);
  });
});

describe('POST /v1/properties/{id}/assign', () => {
  it('sets an enum value on donations, emits donation.updated per change, and the donations show it', async () => {
    const value = { type: 'enum', enum_value_id: fund.options[3] };
    const res = await assign(fund.id, { value, resources: { ids: donations } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ num_updated: 2 });
    for (const id of donations) expect(await updatedEvents(id, 'donation.updated')).toHaveLength(1);
    const one = await get(`/v1/donations/${donations[0]!}`);
    expect(one.body.properties).toEqual([{ property_id: fund.id, value }]);
    const list = await get('/v1/donations');
    const listed = (list.body.results as { id: string; properties: unknown[] }[]).filter((d) => donations.includes(d.id));
    expect(listed.map((d) => d.properties)).toEqual([[{ property_id: fund.id, value }], [{ property_id: fund.id, value }]]);
    // A page reads its property values in one more statement, for the page's ids only.
    probe.probed = [];
    const page = await get('/v1/donations?limit=1');
    const reads = probe.probed.filter((p) => p.inRequest && /from "property_assignments"/.test(p.text));
    expect(reads).toHaveLength(1);
    expect(reads[0]!.parameters).toEqual([[(page.body.results as { id: string }[])[0]!.id]]);
    // The same value again changes nothing.
    expect((await assign(fund.id, { value, resources: { ids: donations } })).body).toEqual({ num_updated: 0 });
    expect(await updatedEvents(donations[0]!, 'donation.updated')).toHaveLength(1);
  });

  it('removes a value with empty: true', async () => {
    await assign(note, { value: { type: 'text', text_value: 'Thank-you call made' }, resources: { ids: [donations[1]!] } });
    const removed = await assign(note, { value: { type: 'text', empty: true }, resources: { ids: donations } });
    expect(removed.body).toEqual({ num_updated: 1 });
    const row = await t.db.selectFrom('property_assignments').select('resource_id').where('property_id', '=', note).execute();
    expect(row).toHaveLength(0);
  });

  it('sets a date on a deposit (deposit.updated) and a member as a user value', async () => {
    const res = await assign(received, { value: { type: 'date', date_value: '2026-04-01T09:30:00Z' }, resources: { ids: [deposit] } });
    expect(res.body).toEqual({ num_updated: 1 });
    expect(await updatedEvents(deposit, 'deposit.updated')).toHaveLength(1);
    const seen = await get(`/v1/deposits/${deposit}`);
    expect(seen.body.properties).toEqual([{ property_id: received, value: { type: 'date', date_value: '2026-04-01T09:30:00Z' } }]);
    const member = staff.users.member.id;
    expect((await assign(reviewer, { value: { type: 'user', user_value_id: member }, resources: { ids: [donations[0]!] } })).body).toEqual({
      num_updated: 1,
    });
  });

  it('refuses with 400: wrong resource type (naming the id), wrong value type, unknown option or user, bad date, too many ids', async () => {
    const wrongType = await assign(fund.id, {
      value: { type: 'enum', enum_value_id: fund.options[0] },
      resources: { ids: [donations[0]!, deposit] },
    });
    expect(wrongType.status).toBe(400);
    expect(String(wrongType.body.detail)).toContain(deposit);
    const cases: unknown[] = [
      { value: { type: 'text', text_value: 'x' }, resources: { ids: [donations[0]] } },
      { value: { type: 'enum', enum_value_id: 'propopt_unknown' }, resources: { ids: [donations[0]] } },
      { value: { type: 'enum' }, resources: { ids: [donations[0]] } },
      { value: { type: 'enum', enum_value_id: fund.options[0] }, resources: { ids: [] } },
      { value: { type: 'enum', enum_value_id: fund.options[0] }, resources: { ids: Array.from({ length: 101 }, () => donations[0]) } },
    ];
    for (const body of cases) expect((await assign(fund.id, body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    const stranger = await assign(reviewer, {
      value: { type: 'user', user_value_id: '00000000-0000-4000-8000-000000000000' },
      resources: { ids: [donations[0]!] },
    });
    expect(stranger.status).toBe(400);
    expect((await assign(reviewer, { value: { type: 'user', user_value_id: 'nobody' }, resources: { ids: [donations[0]!] } })).status).toBe(
      400,
    );
    expect((await assign(received, { value: { type: 'date', date_value: '2026-04-01' }, resources: { ids: [deposit] } })).status).toBe(400);
  });

  it('is 404 with nothing assigned when an id is not the caller’s, or the property is another organization’s', async () => {
    const theirs = await insertDonation(t.db, { nonprofitId: other.nonprofit.id, paymentSourceId: other.lockbox.paymentSourceId });
    const res = await assign(fund.id, {
      value: { type: 'enum', enum_value_id: fund.options[9] },
      resources: { ids: [donations[0]!, theirs] },
    });
    expect(res.status).toBe(404);
    const kept = await t.db
      .selectFrom('property_assignments')
      .select('value')
      .where('property_id', '=', fund.id)
      .where('resource_id', '=', donations[0]!)
      .executeTakeFirstOrThrow();
    expect(kept.value.enum_value_id).toBe(fund.options[3]);
    expect(
      (
        await assign(
          fund.id,
          { value: { type: 'enum', enum_value_id: fund.options[0] }, resources: { ids: [theirs] } },
          other.nonprofit.sandbox,
        )
      ).status,
    ).toBe(404);
  });

  it('needs read_write from an access token: read_only is 403', async () => {
    const login = staff.users.admin;
    const body = { value: { type: 'text', text_value: 'Major gift' }, resources: { ids: [donations[0]!] } };
    const readOnly = await accessToken(server, client, { environment: 'sandbox', redirectUri: REDIRECT, scope: 'read_only', login });
    expect((await assign(note, body, readOnly)).status).toBe(403);
    const readWrite = await accessToken(server, client, { environment: 'sandbox', redirectUri: REDIRECT, scope: 'read_write', login });
    const res = await assign(note, body, readWrite);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ num_updated: 1 });
  });
});

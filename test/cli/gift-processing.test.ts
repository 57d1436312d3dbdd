import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { fulfillLockboxRequest } from '../../src/gift-processing/lockboxes-service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** `admin payment-sources|lockboxes|properties` (docs/operations.md, "Admin CLI"; docs/gift-processing.md, "The API"). */

let t: TestDatabase;
let nonprofitId: string;
let providerId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  nonprofitId = (await addOrganization(t.db, { ein: '74-1000001', name: 'Harbor Food Pantry', kind: 'nonprofit' })).id;
  providerId = (await addOrganization(t.db, { ein: '74-2000002', name: 'Keystone Lockbox', kind: 'lockbox_provider' })).id;
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });
const audit = (event: string) =>
  t.db.selectFrom('audit_events').select(['environment', 'organization_id', 'details']).where('event', '=', event).execute();

describe('admin payment-sources', () => {
  it('adds a manual source with an ACH address on the processing account (production by default), audited; lists it', async () => {
    const added = await admin(
      'payment-sources',
      'add',
      '--org',
      '741000001',
      '--name',
      'Wire gifts',
      '--ach-account',
      '123456789',
      '--ach-routing',
      '021000021',
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const body = JSON.parse(added.stdout) as Record<string, string>;
    expect(body).toMatchObject({ org: '74-1000001', environment: 'production', source_type: 'manual', name: 'Wire gifts' });
    const account = await t.db
      .selectFrom('financial_accounts')
      .select('id')
      .where('organization_id', '=', nonprofitId)
      .where('environment', '=', 'production')
      .where('account_type', '=', 'processing')
      .executeTakeFirstOrThrow();
    expect(body.financial_account_id).toBe(account.id);
    expect(await audit('payment_source.created')).toEqual([
      {
        environment: 'production',
        organization_id: nonprofitId,
        details: { payment_source_id: body.id, source_type: 'manual', name: 'Wire gifts', via: 'admin_cli' },
      },
    ]);
    const portal = await admin(
      'payment-sources',
      'add',
      '--org',
      '74-1000001',
      '--name',
      'Portal',
      '--type',
      'portal',
      '--environment',
      'sandbox',
    );
    expect(portal.code, portal.stderr).toBe(0);
    const listed = await admin('payment-sources', 'list', '--org', '74-1000001', '--json');
    expect((JSON.parse(listed.stdout) as { payment_sources: { id: string }[] }).payment_sources.map((s) => s.id)).toEqual([body.id]);
    const sandbox = await admin('payment-sources', 'list', '--org', '74-1000001', '--environment', 'sandbox');
    expect(sandbox.stdout).toMatch(/portal +Portal/);
  });

  it('refuses a lockbox type, half an ACH address, a bad routing number and a lockbox provider', async () => {
    const lockbox = await admin('payment-sources', 'add', '--org', '74-1000001', '--name', 'X', '--type', 'lockbox');
    expect(lockbox.code).toBe(2);
    const half = await admin('payment-sources', 'add', '--org', '74-1000001', '--name', 'X', '--ach-account', '1234');
    expect(half.code).toBe(2);
    const routing = await admin(
      'payment-sources',
      'add',
      '--org',
      '74-1000001',
      '--name',
      'X',
      '--ach-account',
      '1234',
      '--ach-routing',
      '12',
    );
    expect(routing.code).toBe(2);
    expect(routing.stderr).toMatch(/routing number must be 9 digits/);
    const provider = await admin('payment-sources', 'add', '--org', '74-2000002', '--name', 'X');
    expect(provider.code).toBe(2);
    expect(provider.stderr).toMatch(/lockbox_provider, not a nonprofit/);
  });
});

describe('admin lockboxes', () => {
  it('request prints a one-time request_id (24 random bytes) the provider fulfils once; list shows the lockbox', async () => {
    const requested = await admin(
      'lockboxes',
      'request',
      '--org',
      '74-1000001',
      '--provider',
      '74-2000002',
      '--environment',
      'sandbox',
      '--json',
    );
    expect(requested.code, requested.stderr).toBe(0);
    const { request_id: requestId } = JSON.parse(requested.stdout) as { request_id: string };
    expect(Buffer.from(requestId, 'base64url')).toHaveLength(24);
    const [row] = await audit('lockbox.requested');
    expect(row).toEqual({
      environment: 'sandbox',
      organization_id: nonprofitId,
      details: { provider_ein: '74-2000002', via: 'admin_cli' },
    });
    expect(JSON.stringify(row)).not.toContain(requestId);
    const address = { line1: 'PO Box 77', city: 'Newark', state: 'NJ', postal_code: '07101', country: 'US' };
    const lockbox = await fulfillLockboxRequest(
      t.db,
      { organizationId: providerId, environment: 'sandbox' },
      { requestId, locationId: 'po_77', address },
    );
    const listed = await admin('lockboxes', 'list', '--org', '74-1000001', '--json');
    expect(JSON.parse(listed.stdout)).toEqual({
      lockboxes: [
        expect.objectContaining({
          id: lockbox.id,
          environment: 'sandbox',
          location_id: 'po_77',
          nonprofit: '74-1000001',
          provider: '74-2000002',
          address,
        }),
      ],
    });
    expect((await admin('lockboxes', 'list')).stdout).toContain(lockbox.id);
  });

  it('refuses a provider that is not a lockbox provider', async () => {
    const res = await admin('lockboxes', 'request', '--org', '74-1000001', '--provider', '74-1000001');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/not a lockbox provider/);
  });
});

describe('admin properties', () => {
  it('adds an enum property with its options in order, audited; a second of the same name is refused', async () => {
    const added = await admin(
      'properties',
      'add',
      '--org',
      '74-1000001',
      '--name',
      'Campaign',
      '--resource-type',
      'donation',
      '--type',
      'enum',
      '--option',
      'Spring appeal',
      '--option',
      'Gala',
      '--environment',
      'sandbox',
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const body = JSON.parse(added.stdout) as { id: string; option_ids: string[] };
    const options = await t.db
      .selectFrom('property_options')
      .select(['id', 'name'])
      .where('property_id', '=', body.id)
      .orderBy('position')
      .execute();
    expect(options).toEqual([
      { id: body.option_ids[0], name: 'Spring appeal' },
      { id: body.option_ids[1], name: 'Gala' },
    ]);
    expect((await audit('property.created'))[0]?.details).toMatchObject({ property_id: body.id, property_type: 'enum', via: 'admin_cli' });
    const again = await admin(
      'properties',
      'add',
      '--org',
      '74-1000001',
      '--name',
      'Campaign',
      '--resource-type',
      'donation',
      '--type',
      'text',
      '--environment',
      'sandbox',
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already has a donation property named Campaign/);
  });

  it('refuses an enum without options, options on another type, and an unknown type', async () => {
    const base = ['properties', 'add', '--org', '74-1000001', '--name', 'P', '--resource-type', 'deposit'];
    expect((await admin(...base, '--type', 'enum')).stderr).toMatch(/needs at least one --option/);
    expect((await admin(...base, '--type', 'date', '--option', 'x')).stderr).toMatch(/Only an enum property takes options/);
    expect((await admin(...base, '--type', 'number')).code).toBe(2);
  });
});

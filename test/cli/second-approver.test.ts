import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** `admin orgs second-approver` (docs/grantmaking.md, "Approvals by another person"): the maker sets a grantmaker's setting, audited. */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await addOrganization(t.db, { ein: '74-1000001', name: 'Cedar Grantmakers', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '74-1000002', name: 'Cedar Shelter', kind: 'nonprofit' });
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });
const setting = async (ein: string) =>
  (await t.db.selectFrom('organizations').select('require_second_approver').where('ein', '=', ein).executeTakeFirstOrThrow())
    .require_second_approver;

describe('admin orgs second-approver', () => {
  it('turns it on and off for a grantmaker, audited as the CLI', async () => {
    const on = await admin('orgs', 'second-approver', '--ein', '74-1000001', '--set', 'on');
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toContain('Cedar Grantmakers: disbursements now need a second person to approve');
    expect(await setting('741000001')).toBe(true);
    const off = await admin('orgs', 'second-approver', '--ein', '741000001', '--set', 'off', '--json');
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toEqual({ ein: '741000001', require_second_approver: false });
    expect(await setting('741000001')).toBe(false);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['actor_user_id', 'details'])
      .where('event', '=', 'organization.settings_changed')
      .orderBy('occurred_at')
      .execute();
    expect(audit).toEqual([
      { actor_user_id: null, details: { require_second_approver: true, via: 'admin_cli' } },
      { actor_user_id: null, details: { require_second_approver: false, via: 'admin_cli' } },
    ]);
  });

  it('refuses another kind of organization, an unknown EIN and a value that is not on or off', async () => {
    const nonprofit = await admin('orgs', 'second-approver', '--ein', '74-1000002', '--set', 'on');
    expect(nonprofit.code).not.toBe(0);
    expect(nonprofit.stderr).toContain("only a grantmaker's disbursements are approved");
    expect(await setting('741000002')).toBe(false);
    const unknown = await admin('orgs', 'second-approver', '--ein', '74-9999999', '--set', 'on');
    expect(unknown.stderr).toContain('no organization with EIN 74-9999999');
    const bad = await admin('orgs', 'second-approver', '--ein', '74-1000001', '--set', 'yes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--set must be on or off');
  });
});

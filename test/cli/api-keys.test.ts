import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

let t: TestDatabase;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  staff = await createStaff(t.db);
});
afterAll(async () => t?.drop());

async function admin(...argv: string[]) {
  return runAdmin(argv, { DATABASE_URL: t.url });
}

describe('api-keys commands', () => {
  it('create prints id, key (once), environment and org; only a SHA-256 of the key is stored', async () => {
    const live = await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'production', '--json');
    expect(live.code).toBe(0);
    const created = JSON.parse(live.stdout) as { id: string; key: string; environment: string; org: string };
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^alm_live_[A-Za-z0-9]{32}$/),
      environment: 'production',
      org: `${staff.ein.slice(0, 2)}-${staff.ein.slice(2)}`,
    });
    const test = JSON.parse((await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'sandbox', '--json')).stdout) as {
      key: string;
    };
    expect(test.key).toMatch(/^alm_test_/);
    const rows = await t.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(created.key);
    expect(rows.find((r) => r.id === created.id)!.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('create takes an optional --name, printed and listed with the key', async () => {
    const named = await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'sandbox', '--name', '  Reconciliation   job ');
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(/^name: Reconciliation job$/m);
    const id = /^id: +(key_\w+)$/m.exec(named.stdout)![1]!;
    const listed = JSON.parse((await admin('api-keys', 'list', '--org', staff.ein, '--json')).stdout) as {
      api_keys: { id: string; name: string | null }[];
    };
    expect(listed.api_keys.find((k) => k.id === id)!.name).toBe('Reconciliation job');
    expect((await admin('api-keys', 'list', '--org', staff.ein)).stdout).toMatch(new RegExp(`^${id} .* Reconciliation job$`, 'm'));
    // Without --name, the output is as it always was.
    const unnamed = JSON.parse(
      (await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'sandbox', '--json')).stdout,
    ) as Record<string, unknown>;
    expect(Object.keys(unnamed).sort()).toEqual(['environment', 'id', 'key', 'org']);
    const tooLong = await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'sandbox', '--name', 'x'.repeat(101));
    // Bad input, as every command's: exit 2.
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/1 to 100 characters/);
  });

  it('revoke stops a key and list keeps it with revoked_at', async () => {
    const created = JSON.parse((await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'production', '--json')).stdout) as {
      id: string;
    };
    const revoked = await admin('api-keys', 'revoke', '--id', created.id, '--json');
    expect(JSON.parse(revoked.stdout)).toEqual({ id: created.id });
    const listed = JSON.parse((await admin('api-keys', 'list', '--org', staff.ein, '--json')).stdout) as {
      api_keys: { id: string; revoked_at: string | null; environment: string }[];
    };
    const entry = listed.api_keys.find((k) => k.id === created.id)!;
    expect(entry.revoked_at).toEqual(expect.any(String));
    expect(listed.api_keys.filter((k) => k.revoked_at === null).length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toMatch(/alm_(live|test)_[A-Za-z0-9]{32}/);
    const again = await admin('api-keys', 'revoke', '--id', created.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already revoked/);
  });

  it('refuse an unknown organization, environment or key with one line', async () => {
    expect((await admin('api-keys', 'create', '--org', '99-9999999', '--environment', 'production')).stderr).toMatch(/no organization/);
    expect((await admin('api-keys', 'create', '--org', staff.ein, '--environment', 'staging')).stderr).toMatch(
      /environment must be production or sandbox/,
    );
    expect((await admin('api-keys', 'revoke', '--id', 'key_nope')).stderr).toMatch(/no API key/);
  });
});

describe('demo seed', () => {
  it('adds connects, grants and donations and prints their ids, never replacing', async () => {
    const first = JSON.parse(
      (await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--donations', '25', '--json')).stdout,
    ) as Record<string, string[]>;
    expect(first.connect_ids).toHaveLength(2);
    expect(first.grant_ids).toHaveLength(20);
    expect(first.donation_ids).toHaveLength(25);
    await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--donations', '5', '--json');
    const count = await t.db
      .selectFrom('donations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', staff.orgId)
      .where('environment', '=', 'sandbox')
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(30);
    expect((await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--donations', '-1')).code).toBe(2);
  });
});

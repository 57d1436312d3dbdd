import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runAdmin } from '../helpers/admin-cli.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function admin(args: string, stdin = '') {
  const argv = args.match(/"[^"]*"|\S+/g)!.map((a) => a.replace(/^"|"$/g, ''));
  const { code, stdout, stderr } = await runAdmin(argv, { DATABASE_URL: t.url }, stdin);
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as Record<string, unknown> };
}

/** --json prints exactly one JSON object and nothing else. */
function oneObject(stdout: string): Record<string, unknown> {
  expect(stdout.trim().split('\n')).toHaveLength(1);
  const value: unknown = JSON.parse(stdout);
  expect(value).toBeTypeOf('object');
  return value as Record<string, unknown>;
}

describe('admin CLI', () => {
  it('migrate --json reports what it applied (nothing on a migrated database)', async () => {
    const r = await admin('migrate --json');
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toEqual({ applied: [] });
  });

  it('orgs add prints id, dashed ein, name and kind, and accepts both EIN spellings', async () => {
    const r = await admin('orgs add --ein 123456780 --name "Food For All" --json');
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ein: '12-3456780',
      name: 'Food For All',
      kind: 'nonprofit',
    });
    const fund = await admin('orgs add --ein 98-7654320 --name "Giving Co" --kind fund_provider --json');
    expect(fund.json()).toMatchObject({ ein: '98-7654320', kind: 'fund_provider' });
    const row = await t.db.selectFrom('organizations').selectAll().where('ein', '=', '987654320').executeTakeFirstOrThrow();
    expect(row.name).toBe('Giving Co');
  });

  it('orgs add takes every kind of the published API, and orgs list filters by it', async () => {
    const kinds = ['grantmaker', 'platform', 'lockbox_provider'] as const;
    for (const [i, kind] of kinds.entries()) {
      const r = await admin(`orgs add --ein 77-000000${i} --name "Kind ${kind}" --kind ${kind} --json`);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ ein: `77-000000${i}`, kind });
    }
    const listed = await admin('orgs list --kind grantmaker --json');
    expect((listed.json() as { organizations: { name: string }[] }).organizations.map((o) => o.name)).toEqual(['Kind grantmaker']);
  });

  it('orgs add refuses a duplicate EIN, a malformed EIN and an unknown kind, with one line and no stack', async () => {
    for (const args of [
      'orgs add --ein 12-3456780 --name Again',
      'orgs add --ein 12-345 --name X',
      'orgs add --ein 11-1111111 --name X --kind church',
    ]) {
      const r = await admin(args);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect((await admin('orgs add --ein 12-3456780 --name Again')).stderr).toMatch(/already exists/);
  });

  it('users add reads the password from stdin, strips one trailing newline and stores only an argon2id hash', async () => {
    const r = await admin('users add --email Staff@Example.org --password-stdin --json', 'correct horse battery\n');
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toEqual({ id: expect.any(String), email: 'staff@example.org' });
    const row = await t.db.selectFrom('users').selectAll().where('email', '=', 'staff@example.org').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(row.password_hash).not.toContain('correct horse');
    const { verifyPassword } = await import('../../src/accounts/passwords.js');
    expect(await verifyPassword(row.password_hash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(row.password_hash, 'correct horse battery\n')).toBe(false);
  });

  it('users add refuses an existing user, a short password and a missing --password-stdin', async () => {
    const again = await admin('users add --email staff@example.org --password-stdin', 'another password\n');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    expect((await admin('users add --email new@example.org --password-stdin', 'short\n')).stderr).toMatch(/at least 10/);
    const noStdin = await admin('users add --email new@example.org');
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toMatch(/--password-stdin is required/);
  });

  it('members add, set-role and remove print org, email and role', async () => {
    const added = await admin('members add --org 12-3456780 --email staff@example.org --role member --json');
    expect(added.code).toBe(0);
    expect(oneObject(added.stdout)).toEqual({ org: '12-3456780', email: 'staff@example.org', role: 'member' });
    const dup = await admin('members add --org 123456780 --email staff@example.org --role admin');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already/);
    const changed = await admin('members set-role --org 123456780 --email staff@example.org --role read_only --json');
    expect(oneObject(changed.stdout)).toEqual({ org: '12-3456780', email: 'staff@example.org', role: 'read_only' });
    const listed = await admin('members list --org 12-3456780 --json');
    expect(listed.json()).toEqual({ org: '12-3456780', members: [{ email: 'staff@example.org', role: 'read_only' }] });
    const removed = await admin('members remove --org 12-3456780 --email staff@example.org --json');
    expect(oneObject(removed.stdout)).toEqual({ org: '12-3456780', email: 'staff@example.org', revoked_authorizations: 0 });
    const gone = await admin('members remove --org 12-3456780 --email staff@example.org');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/not a member/);
  });

  it('members commands name what is missing: role, organization or user', async () => {
    expect((await admin('members add --org 12-3456780 --email staff@example.org --role boss')).stderr).toMatch(
      /role must be one of owner, admin, member, read_only/,
    );
    expect((await admin('members add --org 99-9999999 --email staff@example.org --role admin')).stderr).toMatch(
      /no organization with EIN 99-9999999/,
    );
    expect((await admin('members add --org 12-3456780 --email nobody@example.org --role admin')).stderr).toMatch(/no user with email/);
  });

  it('writes an audit event for each change', async () => {
    const events = await t.db.selectFrom('audit_events').select('event').orderBy('id').execute();
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['organization.created', 'user.created', 'membership.added', 'membership.role_changed', 'membership.removed']),
    );
  });

  it('rejects unknown commands and options with status 2, and prints help', async () => {
    const unknown = await admin('frobnicate --json');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    const badOption = await admin('orgs add --ein 1 --name x --colour blue');
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/usage: npm run admin -- orgs add/);
    const help = await admin('--help');
    expect(help.code).toBe(0);
    for (const command of ['migrate', 'orgs add', 'users add', 'members add', 'members set-role', 'members remove'])
      expect(help.stdout).toContain(command);
    expect((await admin('members add --help')).stdout).toMatch(/usage: .*members add --org <ein>/);
  });

  it('reports an unreachable database in one line', async () => {
    const r = await runAdmin(['orgs', 'list'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot reach the database/);
  });
});

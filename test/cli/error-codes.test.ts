import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runAdmin } from '../helpers/admin-cli.js';

/** The admin CLI names the same stable codes as the API's problem documents (src/errors/codes.ts). */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function admin(...argv: string[]) {
  return runAdmin(argv, { DATABASE_URL: t.url });
}

describe('admin CLI error codes', () => {
  it('prints a conflict (a unique violation, through the constraint mapper) with its code, exit 1', async () => {
    expect((await admin('orgs', 'add', '--ein', '12-3456770', '--name', 'Once')).code).toBe(0);
    const again = await admin('orgs', 'add', '--ein', '12-3456770', '--name', 'Twice');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe('almoner admin: error (conflict): an organization with EIN 12-3456770 already exists\n');
  });

  it('prints not_found with its code (exit 1), and invalid with its code and the usage line (exit 2)', async () => {
    const missing = await admin('api-keys', 'revoke', '--id', 'key_nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('almoner admin: error (not_found): no API key key_nope\n');
    const invalid = await admin('orgs', 'add', '--ein', '12-345', '--name', 'X');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^almoner admin: error \(invalid\): "12-345" is not an EIN .*; usage: npm run admin -- orgs add /);
  });
});

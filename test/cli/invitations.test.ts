import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEin } from '../../src/accounts/ein.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invitationMail } from '../helpers/invitations.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

let t: TestDatabase;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  staff = await createStaff(t.db);
});
afterAll(async () => t?.drop());

const DASHBOARDS = { ALMONER_DASHBOARD_URL: 'http://127.0.0.1:3902', ALMONER_SANDBOX_DASHBOARD_URL: 'http://127.0.0.1:3903' };
const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url, ...DASHBOARDS });
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;

describe('members invite, invitations, revoke-invitation', () => {
  it('invite sends the link by mail (never printing it), as the maker: audited without an actor', async () => {
    const email = fresh('cli-invitee');
    const run = await admin('members', 'invite', '--org', staff.ein, '--email', email.toUpperCase(), '--role', 'owner', '--json');
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(printed).toEqual({
      org: formatEin(staff.ein),
      email,
      role: 'owner',
      environment: 'production',
      expires_at: expect.any(String),
      existing_user: false,
      replaced: false,
    });
    const mail = await invitationMail(t.db, email);
    expect(mail.link.startsWith(`${DASHBOARDS.ALMONER_DASHBOARD_URL}/invitations/`)).toBe(true);
    expect(mail.body).toContain('An Almoner administrator invited you');
    expect(run.stdout).not.toContain(mail.token);
    const text = await admin('members', 'invite', '--org', staff.ein, '--email', email, '--role', 'member', '--environment', 'sandbox');
    expect(text.stdout).toMatch(/sent to the dev mail sink \(see `npm run admin -- mail list`\).*replaces the earlier invitation/);
    expect((await invitationMail(t.db, email)).link.startsWith(`${DASHBOARDS.ALMONER_SANDBOX_DASHBOARD_URL}/invitations/`)).toBe(true);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'invitation.created')
      .where('organization_id', '=', staff.orgId)
      .execute();
    expect(audit.map((a) => [a.actor_user_id, (a.details as { via: string }).via])).toEqual([
      [null, 'admin_cli'],
      [null, 'admin_cli'],
    ]);
  });

  it('invitations lists the open ones; revoke-invitation withdraws one (404 when there is none)', async () => {
    const email = fresh('cli-listed');
    await admin('members', 'invite', '--org', staff.ein, '--email', email, '--role', 'read_only');
    const listed = JSON.parse((await admin('members', 'invitations', '--org', staff.ein, '--json')).stdout) as {
      org: string;
      invitations: { email: string; role: string; invited_by: string | null }[];
    };
    expect(listed.invitations).toContainEqual(expect.objectContaining({ email, role: 'read_only', invited_by: null }));
    expect((await admin('members', 'invitations', '--org', staff.ein)).stdout).toMatch(new RegExp(`${email}\\s+read_only\\s+expires `));
    const revoked = await admin('members', 'revoke-invitation', '--org', staff.ein, '--email', email, '--json');
    expect(JSON.parse(revoked.stdout)).toEqual({ org: formatEin(staff.ein), email, role: 'read_only' });
    const after = JSON.parse((await admin('members', 'invitations', '--org', staff.ein, '--json')).stdout) as {
      invitations: { email: string }[];
    };
    expect(after.invitations.map((i) => i.email)).not.toContain(email);
    const again = await admin('members', 'revoke-invitation', '--org', staff.ein, '--email', email);
    expect([again.code, again.stderr.trim()]).toEqual([1, 'almoner admin: error (not_found): there is no such open invitation']);
  });

  it('refuses a member, a malformed address, an unknown role or organization with one line', async () => {
    const member = await admin('members', 'invite', '--org', staff.ein, '--email', staff.users.member.email, '--role', 'admin');
    expect([member.code, member.stderr]).toEqual([
      1,
      `almoner admin: error (conflict): the address ${staff.users.member.email} is already a member of ${(await t.db.selectFrom('organizations').select('name').where('id', '=', staff.orgId).executeTakeFirstOrThrow()).name}\n`,
    ]);
    expect((await admin('members', 'invite', '--org', staff.ein, '--email', 'nope', '--role', 'admin')).stderr).toMatch(
      /not an email address/,
    );
    expect((await admin('members', 'invite', '--org', staff.ein, '--email', fresh('x'), '--role', 'boss')).code).toBe(2);
    expect((await admin('members', 'invite', '--org', '99-9999999', '--email', fresh('x'), '--role', 'admin')).stderr).toMatch(
      /no organization/,
    );
    expect(
      (await admin('members', 'invite', '--org', staff.ein, '--email', fresh('x'), '--role', 'admin', '--environment', 'staging')).code,
    ).toBe(2);
  });
});

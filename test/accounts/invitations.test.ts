import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteMember, maskEmail } from '../../src/accounts/invitations.js';
import { MailDeliveryError, SmtpMailSender } from '../../src/mail/sender.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';

let t: TestDatabase;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  staff = await createStaff(t.db);
});
afterAll(async () => t?.drop());

const origins = { production: 'http://127.0.0.1:3902', sandbox: 'http://127.0.0.1:3903' };

describe('inviteMember when the mail server refuses', () => {
  it('withdraws the new invitation at once (audited, mail_failed) and fails', async () => {
    // A real SMTP client to a port nobody listens on: the connection is refused.
    const refusing = new SmtpMailSender('smtp://127.0.0.1:1', 'almoner@example.org');
    const email = 'unlucky@example.org';
    await expect(
      inviteMember(
        t.db,
        { mail: refusing, dashboardOrigins: origins },
        { organizationId: staff.orgId, email, role: 'member', environment: 'production', actor: null },
      ),
    ).rejects.toBeInstanceOf(MailDeliveryError);
    const rows = await t.db.selectFrom('invitations').selectAll().where('email', '=', email).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.revoked_at).toBeInstanceOf(Date);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['event', 'details'])
      .where('organization_id', '=', staff.orgId)
      .where('event', 'like', 'invitation.%')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.event, (a.details as { reason?: string }).reason])).toEqual([
      ['invitation.created', undefined],
      ['invitation.revoked', 'mail_failed'],
    ]);
  });
});

describe('maskEmail', () => {
  it('keeps the first letter and the domain', () => {
    expect(maskEmail('jordan.lee@example.org')).toBe('j•••@example.org');
    expect(maskEmail('a@b.org')).toBe('a•••@b.org');
  });
});

import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Learning from the audit log whether an address has an account (docs/security.md, "Learning
 * who has an account by inviting them"): an Admin invites an address that has an account in
 * another organization and one that has none, then reads what the organization's trail says of
 * each. Apart from the address itself and the ids and times, the two must be the same.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;

/** The audit page's rows as text, the `<tr>` of each, newest first. */
const pageRows = (html: string) => [...html.matchAll(/<tr>\s*<td><time[\s\S]*?<\/tr>/g)].map((m) => m[0]);

/** A row with what legitimately differs (the address, the invitation's id, times) blanked. */
function blanked(text: string, email: string, invitationId: string): string {
  return text
    .replaceAll(email, '<address>')
    .replaceAll(invitationId, '<invitation>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<instant>')
    .replace(/<time datetime="[^"]*">[^<]*<\/time>/g, '<time>');
}

describe('account existence through invitations', () => {
  it('the audit rows of an invitation to an existing account and to a new address are the same, on the page and in the table', async () => {
    const elsewhere = await createStaff(t.db);
    const s = await createStaff(t.db);
    const existing = elsewhere.users.member.email;
    const unknown = fresh('nobody-yet');
    const admin = await dashboardSession(server, 'production', s.users.admin);
    const answers = [];
    for (const email of [existing, unknown]) answers.push(await inviteFromMembersPage(admin, s.ein, email, 'member'));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    // Both mails went (they may differ: only the addressee reads them); their subjects do not.
    expect((await invitationMail(t.db, existing)).subject).toBe((await invitationMail(t.db, unknown)).subject);

    const ids = Object.fromEntries(
      (await t.db.selectFrom('invitations').select(['id', 'email']).where('organization_id', '=', s.orgId).execute()).map((r) => [
        r.email,
        r.id,
      ]),
    ) as Record<string, string>;
    const rows = await t.db
      .selectFrom('audit_events')
      .select(['event', 'actor_user_id', 'environment', 'client_id', 'details'])
      .where('organization_id', '=', s.orgId)
      .where('event', 'like', 'invitation.%')
      .orderBy('id')
      .execute();
    expect(rows).toHaveLength(2);
    const [toExisting, toUnknown] = rows.map((r, i) => blanked(JSON.stringify(r), [existing, unknown][i]!, ids[[existing, unknown][i]!]!));
    expect(toExisting).toBe(toUnknown);
    expect(JSON.stringify(rows)).not.toMatch(/existing|new_user|account/);

    // What the Admin sees on the audit page.
    const page = await admin.get(`/orgs/${s.ein}/audit?event=invitation.created`);
    expect(page.status).toBe(200);
    const shown = pageRows(page.html);
    expect(shown).toHaveLength(2);
    const [unknownRow, existingRow] = shown;
    expect(blanked(existingRow!, existing, ids[existing]!)).toBe(blanked(unknownRow!, unknown, ids[unknown]!));
  });
});

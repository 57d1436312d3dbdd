import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

// A real SMTP client pointed at a port nobody listens on: every message is refused.
const { testDatabase: t, server } = useOAuthServer({ staff: 0, config: { smtp_url: 'smtp://127.0.0.1:1' } });

describe('an invitation the mail server does not take', () => {
  it('is a 503 page saying nothing was sent; the invitation is withdrawn and the hourly allowance given back', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const answer = await inviteFromMembersPage(session, s.ein, 'unreachable@example.org', 'member');
    expect(answer.status).toBe(503);
    expect(answer.html).toContain('The invitation could not be sent: the mail server did not take the message to unreachable@example.org');
    expect(answer.html).toContain('value="unreachable@example.org"');
    const row = await t.db.selectFrom('invitations').selectAll().where('organization_id', '=', s.orgId).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeInstanceOf(Date);
    expect((await session.get(`/orgs/${s.ein}/members`)).html).toContain('No pending invitations.');
    const counters = await t.db.selectFrom('attempt_counters').select(['key', 'count']).where('key', 'like', 'invitation_org:%').execute();
    expect(counters.map((c) => c.count)).toEqual([0]);
  });
});

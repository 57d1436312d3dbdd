import { describe, expect, it } from 'vitest';
import { apiRequest } from '../helpers/gateway.js';
import { authorizedSession, dafOfFundProvider, directoryOrganizations, givingCaller } from '../helpers/giving.js';
import { captureLogs } from '../helpers/log-capture.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A capture whose donor code the mail server does not take (docs/giving.md, "A grant's life"):
 * the grant and its grant request stand (201), and the request's log says which grant's code was
 * not e-mailed and why. A real SMTP client is pointed at a port nobody listens on.
 */

const logs = captureLogs('warn');
const { testDatabase: t, server } = useOAuthServer({ staff: 0, logger: logs.logger, config: { smtp_url: 'smtp://127.0.0.1:1' } });

describe('POST /v1/grants when the donor code cannot be e-mailed', () => {
  it('captures the grant and logs a warning naming the grant, its request and why', async () => {
    const orgs = await directoryOrganizations(t.db, [{ ein: '871000001', name: 'MEADOW SCHOOL' }]);
    const platform = await givingCaller(t.db, '87-2000001', 'Mail Failure Platform', 'platform');
    const provider = await givingCaller(t.db, '87-3000001', 'Unreachable Charitable', 'fund_provider');
    const connect = await apiRequest(server, 'sandbox', 'POST', '/v1/connects', {
      bearer: platform.sandbox,
      json: { organization_id: orgs.get('871000001'), contact: { email: 'c@example.org' } },
    });
    const session = await authorizedSession(t.db, {
      connectId: String(connect.body.id),
      dafId: await dafOfFundProvider(t.db, provider.id),
      donor: { firstName: 'Noor', email: 'new.donor@example.org' },
    });
    const res = await apiRequest(server, 'sandbox', 'POST', '/v1/grants', {
      bearer: platform.sandbox,
      json: { workflowSessionId: session.id, amount: 10_000 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe('awaiting_account_approval');
    const grant = await t.db.selectFrom('grants').selectAll().where('id', '=', String(res.body.id)).executeTakeFirstOrThrow();
    const warning = logs.records().find((r) => r.msg === "the donor's verification code for a captured grant was not e-mailed");
    expect(warning).toMatchObject({ grant: grant.id, grant_request: grant.grant_request_id });
    // What the mail server answered, for the operator.
    expect(JSON.stringify(warning!.err)).toMatch(/ECONNREFUSED|connect/i);
  });
});

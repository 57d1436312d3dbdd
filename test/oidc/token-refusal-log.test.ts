import { describe, expect, it } from 'vitest';
import { captureLogs } from '../helpers/log-capture.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A refused token request's access-log line says why and for whom (docs/operations.md, "HTTP
 * conventions"): the OAuth error and the client id, whichever check refused it (the provider's
 * token route, our checks before it, client authentication), and never the secret or the token.
 */
const logs = captureLogs('info');
const {
  server,
  staff,
  clients: { client },
} = useOAuthServer({ logger: logs.logger, clients: { client: { environment: 'production' } } });

/** The request's access-log line, once written: it is logged when the response has gone out, which the client may see first. */
async function requestLine(requestId: string | null) {
  const linesOf = () => logs.records().filter((r) => r.msg === 'request' && r.req_id === requestId);
  await expect.poll(() => linesOf().length, { timeout: 5_000 }).toBeGreaterThan(0);
  const lines = linesOf();
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('the access-log line of a refused token request', () => {
  it('carries oauth_error and client_id for an unknown refresh token, a wrong secret and a malformed code exchange', async () => {
    const cases = [
      {
        caller: client,
        form: { grant_type: 'refresh_token', refresh_token: 'no-such-refresh-token' },
        status: 401,
        error: 'invalid_grant',
      },
      {
        caller: { client_id: client.client_id, client_secret: 'not-the-secret' },
        form: { grant_type: 'refresh_token', refresh_token: 'x' },
        status: 401,
        error: 'invalid_client',
      },
      { caller: client, form: { grant_type: 'authorization_code', code: 'abc' }, status: 400, error: 'invalid_request' },
    ];
    for (const c of cases) {
      const answer = await tokenRequest(server, 'production', c.caller, c.form);
      expect(answer.status).toBe(c.status);
      expect(answer.body.error).toBe(c.error);
      const line = await requestLine(answer.headers.get('x-request-id'));
      expect(line).toMatchObject({ path: '/auth/oauth/token', status: c.status, oauth_error: c.error, client_id: client.client_id });
    }
    const text = logs.chunks.join('');
    expect(text).not.toContain(client.client_secret);
    expect(text).not.toContain('no-such-refresh-token');
  });

  it('a successful exchange carries neither', async () => {
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only offline_access',
      login: staff.users.member,
    });
    expect(tokens.status).toBe(200);
    const answer = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(answer.status).toBe(200);
    const line = await requestLine(answer.headers.get('x-request-id'));
    expect(line).toMatchObject({ path: '/auth/oauth/token', status: 200 });
    expect(line).not.toHaveProperty('oauth_error');
  });
});

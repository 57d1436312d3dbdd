import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { authorize, introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { apiGet } from '../helpers/gateway.js';
import { captureLogs } from '../helpers/log-capture.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Every log line written, at the most verbose level. */
const { chunks: lines, logger } = captureLogs('trace');

const REDIRECT = 'https://app.example.org/callback';
const { testDatabase: t, server, staff } = useOAuthServer({ logger });

describe('secrets in logs', () => {
  it('no raw token, code, client secret, API key or password is ever logged', async () => {
    const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { tokens, code } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    // A replay, a wrong secret and a failed login are logged as refusals, without the values.
    await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string });
    await tokenRequest(
      server,
      'production',
      { client_id: client.client_id, client_secret: 'wrong-secret-value-123' },
      { grant_type: 'refresh_token', refresh_token: 'x' },
    );
    await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: { email: staff.users.admin.email, password: 'not-the-password-456' },
    }).catch(() => undefined);
    await introspect(server, 'production', client, refreshed.body.access_token as string);
    const key = (await createApiKey(t.db, { org: staff.ein, environment: 'production' })).key;
    await apiGet(server, 'production', '/v1/donations?limit=1', { bearer: key });
    await apiGet(server, 'production', `/v1/donations?page_token=${encodeURIComponent(tokens.body.access_token as string)}`, {
      bearer: refreshed.body.access_token as string,
    });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(10);
    expect(log).toContain('token request refused');
    const secrets = [
      tokens.body.access_token,
      tokens.body.refresh_token,
      tokens.body.id_token,
      refreshed.body.access_token,
      refreshed.body.refresh_token,
      code,
      client.client_secret,
      'wrong-secret-value-123',
      staff.users.member.password,
      'not-the-password-456',
      key,
    ] as string[];
    for (const secret of secrets) expect(log, 'a secret reached the log').not.toContain(secret);
    const privateKeys = await t.db.selectFrom('signing_keys').select('private_jwk').execute();
    for (const { private_jwk } of privateKeys) expect(log).not.toContain((private_jwk as { d: string }).d);
  });
});

describe('secrets at rest', () => {
  it('private signing keys, cookie and CSRF keys and webhook signing secrets are stored sealed', async () => {
    const { sql } = await import('kysely');
    const { rows } = await sql<{ t: string }>`select string_agg(x::text, ' ') as t from (
      select row_to_json(k)::text as x from signing_keys k
      union all select row_to_json(s)::text from server_keys s
      union all select row_to_json(e)::text from event_subscriptions e) all_rows`.execute(t.db);
    const dump = rows[0]!.t ?? '';
    const { testBox } = await import('../helpers/app.js');
    const keys = await t.db.selectFrom('signing_keys').select('private_jwk').execute();
    expect(keys.length).toBeGreaterThan(0);
    for (const { private_jwk } of keys) {
      const jwk = JSON.parse(testBox.open((private_jwk as { sealed: string }).sealed)) as { d: string; p?: string };
      expect(dump).not.toContain(jwk.d);
      if (jwk.p) expect(dump).not.toContain(jwk.p);
    }
    const secrets = await t.db.selectFrom('server_keys').select(['name', 'value']).execute();
    expect(new Set(secrets.map((s) => s.name)).size).toBe(5);
    for (const { value } of secrets) {
      expect(value.startsWith('enc:v1:')).toBe(true);
      expect(dump).not.toContain(testBox.open(value));
    }
  });
});

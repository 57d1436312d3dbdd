import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { hashId } from '../../src/db/provider-store.js';
import { rotateClientSecret } from '../../src/oidc/clients/service.js';
import { CLIENT_CACHE_MS } from '../../src/oidc/client-adapter.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { authorize, introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The token endpoint's unit of work (src/oidc/unit-of-work.ts, the token plan): one read of the presented token
 * with its Grant and authorization, one write of everything the response hands out, and
 * nothing written when the consume loses a race.
 */

const REDIRECT = 'https://app.example.org/callback';
const probe = new StatementProbe();
const {
  testDatabase: t,
  server,
  staff,
  clients,
} = useOAuthServer({ plugins: [probe], clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });
// A `let`: the secret-rotation test goes on with the rotated credentials.
let client = clients.client;
beforeEach(() => {
  probe.interceptor = undefined;
});

const tokens = () =>
  obtainTokens(server, {
    environment: 'production',
    client,
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only',
    login: staff.users.member,
  });

async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = server.runtime.metrics.registry.getSingleMetric(name);
  const values = (await metric!.get()).values;
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

async function grantOf(refreshToken: string): Promise<string> {
  const row = await t.db
    .selectFrom('oidc_models')
    .select('grant_id')
    .where('model', '=', 'RefreshToken')
    .where('id', '=', hashId(refreshToken))
    .executeTakeFirstOrThrow();
  return row.grant_id!;
}

async function rowsOf(grantId: string) {
  const tokenRows = await t.db.selectFrom('oidc_models').select(['model', 'consumed_at']).where('grant_id', '=', grantId).execute();
  const issued = await t.db.selectFrom('audit_events').select('id').where('event', '=', 'token.issued').execute();
  const authorization = await t.db
    .selectFrom('oauth_authorizations')
    .select(['revoked_at', 'revoked_reason'])
    .where('grant_id', '=', grantId)
    .executeTakeFirstOrThrow();
  return {
    accessTokens: tokenRows.filter((r) => r.model === 'AccessToken').length,
    refreshTokens: tokenRows.filter((r) => r.model === 'RefreshToken').length,
    issued: issued.length,
    authorization,
  };
}

describe('token endpoint unit of work', () => {
  it('a refresh reads its token, Grant and authorization in one statement and writes in one', async () => {
    const first = await tokens();
    const refreshToken = first.tokens.body.refresh_token as string;
    const grantId = await grantOf(refreshToken);
    const before = await rowsOf(grantId);
    probe.reset();
    const next = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(next.status).toBe(200);
    const statements = probe.tokenStatements();
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/from oauth_authorizations a/);
    expect(statements[1]).toMatch(/consumed as \(update oidc_models/);
    // What the one write committed: the old token consumed, a new pair, the audit row.
    const after = await rowsOf(grantId);
    expect(after.accessTokens).toBe(before.accessTokens + 1);
    expect(after.refreshTokens).toBe(before.refreshTokens + 1);
    expect(after.issued).toBe(before.issued + 1);
    const old = await t.db
      .selectFrom('oidc_models')
      .select('consumed_at')
      .where('model', '=', 'RefreshToken')
      .where('id', '=', hashId(refreshToken))
      .executeTakeFirstOrThrow();
    expect(old.consumed_at).toBeInstanceOf(Date);
    // The new pair is usable.
    const again = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: next.body.refresh_token as string,
    });
    expect(again.status).toBe(200);
  });

  it('a code exchange is likewise one read and one write', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    const code = result.callback.searchParams.get('code')!;
    probe.reset();
    const exchanged = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: result.verifier,
      redirect_uri: REDIRECT,
    });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.id_token).toEqual(expect.any(String));
    expect(probe.tokenStatements()).toHaveLength(2);
  });

  it('a refresh that loses the race to consume writes nothing, is refused 401 and ends the authorization', async () => {
    const first = await tokens();
    const refreshToken = first.tokens.body.refresh_token as string;
    const grantId = await grantOf(refreshToken);
    const before = await rowsOf(grantId);
    // A rival request consumes the token between this request's read and its write.
    probe.interceptor = {
      match: /from oauth_authorizations a/,
      run: async () => {
        await t.db
          .updateTable('oidc_models')
          .set({ consumed_at: new Date() })
          .where('model', '=', 'RefreshToken')
          .where('id', '=', hashId(refreshToken))
          .execute();
      },
    };
    const issuedBefore = await metricValue('almoner_oauth_tokens_issued_total', { environment: 'production', grant_type: 'refresh_token' });
    const refusedBefore = await metricValue('almoner_oauth_token_errors_total', { environment: 'production', error: 'invalid_grant' });
    const lost = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(probe.interceptor).toBeUndefined();
    // Counted as the refusal it became, not as an issue (the provider announced success first).
    expect(await metricValue('almoner_oauth_tokens_issued_total', { environment: 'production', grant_type: 'refresh_token' })).toBe(
      issuedBefore,
    );
    expect(await metricValue('almoner_oauth_token_errors_total', { environment: 'production', error: 'invalid_grant' })).toBe(
      refusedBefore + 1,
    );
    expect(lost.status).toBe(401);
    expect(lost.body).toMatchObject({ error: 'invalid_grant' });
    expect(lost.body.access_token).toBeUndefined();
    // Nothing of the losing request was stored or audited; the replay ended the authorization.
    const after = await rowsOf(grantId);
    expect(after.issued).toBe(before.issued);
    expect(after.accessTokens).toBe(0);
    expect(after.refreshTokens).toBe(0);
    expect(after.authorization.revoked_at).toBeInstanceOf(Date);
    expect(after.authorization.revoked_reason).toBe('refresh_token_reuse');
    expect((await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken })).status).toBe(
      401,
    );
  });

  it('a code exchange that loses the race to consume writes nothing and ends the authorization', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    const code = result.callback.searchParams.get('code')!;
    const stored = await t.db
      .selectFrom('oidc_models')
      .select('grant_id')
      .where('model', '=', 'AuthorizationCode')
      .where('id', '=', hashId(code))
      .executeTakeFirstOrThrow();
    const issuedBefore = (await rowsOf(stored.grant_id!)).issued;
    probe.interceptor = {
      match: /from oauth_authorizations a/,
      run: async () => {
        await t.db
          .updateTable('oidc_models')
          .set({ consumed_at: new Date() })
          .where('model', '=', 'AuthorizationCode')
          .where('id', '=', hashId(code))
          .execute();
      },
    };
    const lost = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: result.verifier,
      redirect_uri: REDIRECT,
    });
    expect(lost.status).toBe(401);
    expect(lost.body).toMatchObject({ error: 'invalid_grant' });
    const after = await rowsOf(stored.grant_id!);
    expect(after.accessTokens + after.refreshTokens).toBe(0);
    expect(after.issued).toBe(issuedBefore);
    expect(after.authorization.revoked_reason).toBe('authorization_code_replay');
  });

  it('introspection reads the token with its authorization: no statement but the token lookups', async () => {
    const first = await tokens();
    await introspect(server, 'production', client, first.tokens.body.access_token as string);
    probe.reset();
    const seen = await introspect(server, 'production', client, first.tokens.body.access_token as string);
    expect(seen.body).toMatchObject({ active: true, scope: expect.stringContaining('read_only'), subject_type: 'user' });
    // The library looks the value up as each kind of token it could be (at most three here: an
    // access token, a bank-data client's own client-credentials token, a refresh token); the
    // authorization comes with the lookup that finds it, not from a statement of its own.
    const lookups = probe.tokenStatements();
    expect(lookups.length).toBeGreaterThanOrEqual(1);
    expect(lookups.length).toBeLessThanOrEqual(3);
    expect(lookups.every((s) => s.includes('left join lateral'))).toBe(true);
    probe.reset();
    expect((await introspect(server, 'production', client, first.tokens.body.refresh_token as string)).body).toMatchObject({
      active: true,
    });
    expect(probe.tokenStatements().every((s) => s.includes('left join lateral'))).toBe(true);
  });

  it('a refused request writes nothing (a wrong PKCE verifier leaves the code usable)', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    const code = result.callback.searchParams.get('code')!;
    probe.reset();
    const wrong = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: 'x'.repeat(43),
      redirect_uri: REDIRECT,
    });
    expect(wrong.status).toBe(401);
    expect(probe.tokenStatements().some((s) => /update oidc_models|insert into/i.test(s))).toBe(false);
    const right = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: result.verifier,
      redirect_uri: REDIRECT,
    });
    expect(right.status).toBe(200);
  });
});

describe('client registrations read by the token endpoint', () => {
  const refreshWith = async (c: { client_id: string; client_secret: string }) => {
    const first = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    return tokenRequest(server, 'production', c, { grant_type: 'refresh_token', refresh_token: first.tokens.body.refresh_token as string });
  };

  it('are reused for a moment instead of read on every request', async () => {
    const first = await refreshWith(client);
    expect(first.status).toBe(200);
    probe.reset();
    const second = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
    });
    expect(second.status).toBe(200);
    // A token request right after another of the same client: its registration is not read again.
    expect(probe.statements.filter((s) => /from "oauth_clients"/.test(s))).toHaveLength(0);
  });

  it('a secret rotated by another process works at once, and the old one stops within the cache time', async () => {
    await refreshWith(client);
    // Another process (the admin CLI) rotates the secret: this server's cached registration is stale.
    const rotated = await rotateClientSecret(
      { db: t.db, clientsFile: server.config.clients_file, passwordParams: MIN_PASSWORD_PARAMS },
      client.client_id,
    );
    const fresh = { client_id: client.client_id, client_secret: rotated.client_secret };
    const atOnce = await tokenRequest(server, 'production', fresh, { grant_type: 'refresh_token', refresh_token: 'unknown-token' });
    // Authenticated (the token is unknown: invalid_grant), not invalid_client.
    expect(atOnce.body.error).toBe('invalid_grant');
    const old = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: 'unknown-token' });
    expect(old.body.error).toBe('invalid_client');
    // Once the cache time has passed (the clock moved, as in refresh-lifetime.test.ts) the
    // registration is read again, and the old secret is still refused.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + CLIENT_CACHE_MS });
    onTestFinished(() => void vi.useRealTimers());
    probe.reset();
    expect(
      (await tokenRequest(server, 'production', fresh, { grant_type: 'refresh_token', refresh_token: 'unknown-token' })).body.error,
    ).toBe('invalid_grant');
    expect(probe.statements.filter((s) => /from "oauth_clients"/.test(s)).length, 'read again after the cache time').toBeGreaterThan(0);
    expect(
      (await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: 'unknown-token' })).body.error,
    ).toBe('invalid_client');
    client = fresh;
    expect((await refreshWith(client)).status).toBe(200);
  });
});

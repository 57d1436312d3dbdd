import * as oauth from 'oauth4webapi';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { authorize, basic, endpoints, introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid', 'offline_access'] },
  },
});

const flow = (scope = 'openid read_only read_write', login = staff.users.member) =>
  obtainTokens(server, { environment: 'production', client, clientId: client.client_id, redirectUri: REDIRECT, scope, login });

describe('token endpoint: authorization_code', () => {
  it('returns access_token, refresh_token, expires_in 900, token_type Bearer, scope and an id_token, without redirect_uri', async () => {
    const { tokens } = await flow();
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toContain('no-store');
    expect(tokens.body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_in: 900,
      token_type: 'Bearer',
      scope: 'read_only read_write openid',
      id_token: expect.any(String),
    });
  });

  it('answers a replayed code with 401 and revokes what its first use issued', async () => {
    const { code, verifier, tokens } = await flow();
    const replay = await tokenRequest(server, 'production', client, { grant_type: 'authorization_code', code, code_verifier: verifier });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await introspect(server, 'production', client, tokens.body.access_token as string)).body).toEqual({ active: false });
    const refresh = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(refresh.status).toBe(401);
  });

  it('answers a wrong code verifier with 401, and a malformed one (42 characters) with 400', async () => {
    const wrong = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    const code = wrong.callback.searchParams.get('code')!;
    const short = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: 'a'.repeat(42),
    });
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('invalid_request');
    const mismatch = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    expect(mismatch.status).toBe(401);
    expect(mismatch.body.error).toBe('invalid_grant');
  });

  it('answers an unknown code with 401 and malformed requests with 400', async () => {
    expect(
      (
        await tokenRequest(server, 'production', client, {
          grant_type: 'authorization_code',
          code: 'nope',
          code_verifier: oauth.generateRandomCodeVerifier(),
        })
      ).status,
    ).toBe(401);
    const missing = await tokenRequest(server, 'production', client, { grant_type: 'authorization_code', code: 'nope' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    const unsupported = await tokenRequest(server, 'production', client, { grant_type: 'password' });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error).toBe('unsupported_grant_type');
    // client_credentials exists for bank-data (fapi2) clients only: a standard client may not use it.
    const notAllowed = await tokenRequest(server, 'production', client, { grant_type: 'client_credentials' });
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.body.error).toBe('unauthorized_client');
    const json = await fetch(endpoints(server, 'production').token, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic(client.client_id, client.client_secret) },
      body: '{"grant_type":"refresh_token"}',
    });
    expect(json.status).toBe(400);
  });

  it('answers bad client credentials with 401 invalid_client: wrong secret, none, or a secret in the body', async () => {
    const wrong = await tokenRequest(
      server,
      'production',
      { client_id: client.client_id, client_secret: 'wrong' },
      { grant_type: 'refresh_token', refresh_token: 'x' },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(
      (
        await tokenRequest(server, 'production', undefined, {
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: client.client_id,
        })
      ).status,
    ).toBe(401);
    const body = await tokenRequest(server, 'production', undefined, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    expect(body.status).toBe(401);
    expect(body.body.error).toBe('invalid_client');
    const both = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_secret: client.client_secret,
    });
    expect(both.status).toBe(401);
  });

  it('refuses a code older than 60 seconds with 401', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    const row = await t.db
      .selectFrom('oidc_models')
      .select(['id', 'payload'])
      .where('model', '=', 'AuthorizationCode')
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    // Age the stored code by 61 seconds (the provider checks its exp claim).
    const payload = row.payload as { iat: number; exp: number };
    await t.db
      .updateTable('oidc_models')
      .set({ payload: JSON.stringify({ ...payload, iat: payload.iat - 61, exp: payload.exp - 61 }) })
      .where('id', '=', row.id)
      .execute();
    const expired = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code: result.callback.searchParams.get('code')!,
      code_verifier: result.verifier,
    });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe('invalid_grant');
    expect(payload.exp - payload.iat).toBe(60);
  });
});

describe('token endpoint: refresh_token', () => {
  it('rotates: each use returns a new pair and the old refresh token is spent', async () => {
    const { tokens } = await flow();
    const first = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ expires_in: 900, token_type: 'Bearer' });
    expect(first.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(first.body.access_token).not.toBe(tokens.body.access_token);
    const second = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
    });
    expect(second.status).toBe(200);
  });

  it('revokes every token of the authorization when an exchanged refresh token is presented again', async () => {
    const { tokens } = await flow();
    const rotated = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(rotated.status).toBe(200);
    const reuse = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe('invalid_grant');
    // The successor pair died with the authorization.
    expect(
      (
        await tokenRequest(server, 'production', client, {
          grant_type: 'refresh_token',
          refresh_token: rotated.body.refresh_token as string,
        })
      ).status,
    ).toBe(401);
    expect((await introspect(server, 'production', client, rotated.body.access_token as string)).body).toEqual({ active: false });
    const sessions = await t.db.selectFrom('oidc_models').select('payload').where('model', '=', 'Session').execute();
    const grants = await t.db
      .selectFrom('oauth_authorizations')
      .select(['grant_id', 'revoked_at', 'revoked_reason'])
      .where('revoked_at', 'is not', null)
      .execute();
    expect(grants.length).toBeGreaterThan(0);
    for (const g of grants) expect(JSON.stringify(sessions.map((s) => s.payload))).not.toContain(g.grant_id);
    const audit = await t.db.selectFrom('audit_events').select('event').where('event', '=', 'refresh_token.reuse').execute();
    expect(audit.length).toBeGreaterThan(0);
  });

  it('answers a replayed refresh token only once its authorization is revoked and gone from every session', async () => {
    const { tokens } = await flow();
    const rotated = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(rotated.status).toBe(200);
    // Hold the authorization rows so the revocation cannot finish until we let it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: (backendPid: number) => void;
    const lockHeld = new Promise<number>((resolve) => (held = resolve));
    const holder = t.db.transaction().execute(async (trx) => {
      await trx
        .selectFrom('oauth_authorizations')
        .select('grant_id')
        .where('client_id', '=', client.client_id)
        .where('revoked_at', 'is', null)
        .forUpdate()
        .execute();
      held((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid);
      await released;
    });
    const holderPid = await lockHeld;
    let answered = false;
    const reuse = tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    }).then((response) => {
      answered = true;
      return response;
    });
    try {
      // The request's revocation is blocked on the rows we hold, and it has not answered: the
      // answer waits for the bookkeeping.
      await waitUntilBlockedBy(holderPid);
      expect(answered).toBe(false);
    } finally {
      release();
      await holder;
    }
    const response = await reuse;
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_grant');
    // Read at once: the answer came after the bookkeeping, not before it.
    const revoked = await t.db
      .selectFrom('oauth_authorizations')
      .select('grant_id')
      .where('client_id', '=', client.client_id)
      .where('revoked_reason', '=', 'replay_detected')
      .execute();
    expect(revoked.length).toBeGreaterThan(0);
    const sessions = JSON.stringify(
      (await t.db.selectFrom('oidc_models').select('payload').where('model', '=', 'Session').execute()).map((s) => s.payload),
    );
    for (const g of revoked) expect(sessions).not.toContain(g.grant_id);
  });

  it("answers an unknown refresh token and another client's refresh token with 401", async () => {
    const other = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { tokens } = await flow();
    expect((await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: 'x'.repeat(43) })).status).toBe(
      401,
    );
    expect(
      (await tokenRequest(server, 'production', other, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }))
        .status,
    ).toBe(401);
  });
});

describe('credentials of one environment', () => {
  it('are unknown in the other', async () => {
    const sandboxClient = await server.registerClient({ environment: 'sandbox' });
    const atProduction = await tokenRequest(server, 'production', sandboxClient, { grant_type: 'refresh_token', refresh_token: 'x' });
    expect(atProduction.status).toBe(401);
    expect(atProduction.body.error).toBe('invalid_client');
    const { tokens } = await flow();
    const sandboxIntrospection = await introspect(server, 'sandbox', sandboxClient, tokens.body.access_token as string);
    expect(sandboxIntrospection.body).toEqual({ active: false });
  });
});

describe('secrets at rest', () => {
  it('no raw token, code or client secret appears anywhere in the database', async () => {
    const { tokens, code } = await flow();
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    const secrets = [
      tokens.body.access_token,
      tokens.body.refresh_token,
      code,
      refreshed.body.access_token,
      refreshed.body.refresh_token,
      client.client_secret,
    ] as string[];
    const tables = await t.db
      .selectFrom('pg_tables' as never)
      .select('tablename' as never)
      .where('schemaname' as never, '=', 'public' as never)
      .execute();
    let dump = '';
    for (const { tablename } of tables as { tablename: string }[]) {
      const { rows } = await (
        await import('kysely')
      ).sql
        .raw<{ row: unknown }>(`select row_to_json(x) as row from ${tablename} x`)
        .execute(t.db);
      dump += JSON.stringify(rows);
    }
    expect(dump.length).toBeGreaterThan(1000);
    for (const secret of secrets) expect(dump).not.toContain(secret);
  });
});

/** Resolves once a connection to this test's database waits on a lock that backend `holderPid` holds. */
async function waitUntilBlockedBy(holderPid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and ${holderPid}::int = any(pg_blocking_pids(pid))`.execute(
      t.db,
    );
    if (rows[0]!.n > 0) return;
    if (performance.now() > deadline) throw new Error(`no request waited on the rows backend ${holderPid} holds within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a web page calling the token endpoint (CORS)', () => {
  const ORIGIN = 'https://app.example.org';

  it('gets the preflight and the request answered alike: the page may read the refusal, which says to call from a backend', async () => {
    const { token, api } = endpoints(server, 'production');
    const preflight = await fetch(token, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);

    // The request the page then sends, with a working code: refused before the code is touched.
    const { callback, verifier } = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    const form = { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, code_verifier: verifier };
    const fromPage = await tokenRequest(server, 'production', client, form, { origin: ORIGIN });
    expect(fromPage.status).toBe(400);
    expect(fromPage.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(fromPage.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/backend/) });
    // The same code from the backend still works.
    expect((await tokenRequest(server, 'production', client, form)).status).toBe(200);

    // Introspection and revocation answer a page the same way.
    for (const path of ['/auth/oauth/introspect', '/auth/oauth/revoke']) {
      const response = await fetch(`${api}${path}`, {
        method: 'POST',
        headers: {
          origin: ORIGIN,
          authorization: basic(client.client_id, client.client_secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'token=x',
      });
      expect(response.status, path).toBe(400);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(ORIGIN);
    }
  });
});

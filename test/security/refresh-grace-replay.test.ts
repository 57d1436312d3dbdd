/**
 * Attack: with refresh_reuse_grace_seconds > 0, present a refresh token that was already
 * exchanged, inside the window, with no client authentication, a wrong secret or another
 * client's valid credentials, and collect the stored successor pair.
 * Protection: the successor is replayed only to a request the token endpoint has
 * authenticated as the client the token was issued to (middleware/refresh-grace.ts answers
 * only a lost consume race, which the provider reaches after client authentication and the
 * token's client check). A failed client authentication changes nothing; outside the window
 * reuse by the right client still revokes the authorization.
 */
import { describe, expect, it } from 'vitest';
import { endpoints, introspect, obtainTokens, tokenRequest, type TokenResult } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const GRACE_SECONDS = 300;
type Client = { client_id: string; client_secret: string };

const {
  testDatabase: t,
  server,
  staff,
  clients: { otherClient },
} = useOAuthServer({
  config: { refresh_reuse_grace_seconds: GRACE_SECONDS },
  clients: { otherClient: { environment: 'production', redirectUris: [REDIRECT] } },
});

/** A victim client of its own (failure limits are per client) with a fresh authorization. */
async function victim() {
  const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
  const { tokens } = await obtainTokens(server, {
    environment: 'production',
    client,
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'read_only offline_access',
    login: staff.users.member,
  });
  expect(tokens.status).toBe(200);
  const grant = await t.db
    .selectFrom('oauth_authorizations')
    .select('grant_id')
    .where('client_id', '=', client.client_id)
    .executeTakeFirstOrThrow();
  return { client, refreshToken: tokens.body.refresh_token as string, grantId: grant.grant_id };
}

const refresh = (client: Client | undefined, refreshToken: string) =>
  tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** A refresh with the victim's client_id in the body and no Authorization header at all. */
async function refreshUnauthenticated(clientId: string, refreshToken: string): Promise<TokenResult> {
  const response = await fetch(endpoints(server, 'production').token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

function expectRefused(res: TokenResult) {
  expect(res.status).toBe(401);
  expect(['invalid_client', 'invalid_grant']).toContain(res.body.error);
  expect(res.body.access_token).toBeUndefined();
  expect(res.body.refresh_token).toBeUndefined();
  expect(res.headers.get('cache-control')).toBe('no-store');
}

async function revokedAt(grantId: string) {
  return (await t.db.selectFrom('oauth_authorizations').select('revoked_at').where('grant_id', '=', grantId).executeTakeFirstOrThrow())
    .revoked_at;
}

/** Moves the first use of every consumed refresh token of a grant out of the grace window. */
async function agePastGrace(grantId: string) {
  await t.db
    .updateTable('oidc_models')
    .set({ consumed_at: new Date(Date.now() - (GRACE_SECONDS + 60) * 1000) })
    .where('model', '=', 'RefreshToken')
    .where('grant_id', '=', grantId)
    .where('consumed_at', 'is not', null)
    .execute();
}

describe('refresh grace window: the successor pair goes only to the authenticated client', () => {
  it('refuses a replay inside the window without auth, with a wrong secret or with another client (401, no tokens), and the grant is untouched', async () => {
    const { client, refreshToken, grantId } = await victim();
    const first = await refresh(client, refreshToken);
    expect(first.status).toBe(200);

    const unauthenticated = await refreshUnauthenticated(client.client_id, refreshToken);
    expectRefused(unauthenticated);
    expect(unauthenticated.body.error).toBe('invalid_client');
    const wrongSecret = await refresh({ client_id: client.client_id, client_secret: `${client.client_secret}x` }, refreshToken);
    expectRefused(wrongSecret);
    expect(wrongSecret.body.error).toBe('invalid_client');
    expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic/);
    const foreign = await refresh(otherClient, refreshToken);
    expectRefused(foreign);

    // Nothing happened to the victim's authorization: its tokens still work.
    expect(await revokedAt(grantId)).toBeNull();
    expect((await introspect(server, 'production', client, first.body.access_token as string)).body.active).toBe(true);
    // And the right client, inside the window, still gets the identical pair.
    const duplicate = await refresh(client, refreshToken);
    expect(duplicate.status).toBe(200);
    expect([duplicate.body.access_token, duplicate.body.refresh_token]).toEqual([first.body.access_token, first.body.refresh_token]);
  });

  it('gives the right client inside the window the identical successor pair, and the chain goes on', async () => {
    const { client, refreshToken } = await victim();
    const first = await refresh(client, refreshToken);
    const again = await refresh(client, refreshToken);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect((await refresh(client, first.body.refresh_token as string)).status).toBe(200);
  });

  it("outside the window: a failed client authentication changes nothing, the right client's reuse revokes the authorization", async () => {
    const { client, refreshToken, grantId } = await victim();
    const first = await refresh(client, refreshToken);
    expect(first.status).toBe(200);
    await agePastGrace(grantId);

    // Without the secret (or as another client) an attacker can neither refresh nor revoke.
    expectRefused(await refresh({ client_id: client.client_id, client_secret: 'not-the-secret-000' }, refreshToken));
    expectRefused(await refresh(otherClient, refreshToken));
    expectRefused(await refreshUnauthenticated(client.client_id, refreshToken));
    expect(await revokedAt(grantId)).toBeNull();
    expect((await introspect(server, 'production', client, first.body.access_token as string)).body.active).toBe(true);

    // The client itself presenting a used token outside the window is reuse: everything ends.
    expectRefused(await refresh(client, refreshToken));
    expect(await revokedAt(grantId)).not.toBeNull();
    expect((await introspect(server, 'production', client, first.body.access_token as string)).body.active).toBe(false);
    expectRefused(await refresh(client, first.body.refresh_token as string));
  });

  it('inside the window an exchanged refresh token introspects active: false, while the exchange can still be replayed', async () => {
    const { client, refreshToken } = await victim();
    expect((await introspect(server, 'production', client, refreshToken)).body.active).toBe(true);
    const first = await refresh(client, refreshToken);
    expect(first.status).toBe(200);
    expect((await introspect(server, 'production', client, refreshToken)).body).toEqual({ active: false });
    expect((await introspect(server, 'production', client, first.body.refresh_token as string)).body.active).toBe(true);
    // The window is for a duplicate of the exchange: it still gets the same pair.
    const duplicate = await refresh(client, refreshToken);
    expect(duplicate.status).toBe(200);
    expect(duplicate.body.refresh_token).toBe(first.body.refresh_token);
  });

  it('under concurrent presentations mixing the right client, a wrong secret and another client, only the right client gets tokens, all the same pair', async () => {
    const { client, refreshToken, grantId } = await victim();
    const wrong = { client_id: client.client_id, client_secret: 'wrong-secret-value-1' };
    // Two waves: the first races the first use itself, the second arrives once it is consumed.
    // Fewer wrong secrets than the failure limit, so the legitimate client is never locked out.
    const callers = Array.from({ length: 12 }, (_, i) => [client, wrong, otherClient][i % 3]!);
    const wave = () => Promise.all(callers.map(async (caller) => ({ caller, res: await refresh(caller, refreshToken) })));
    const results = [...(await wave()), ...(await wave())];

    const right = results.filter((r) => r.caller === client);
    expect(right.map((r) => r.res.status)).toEqual(Array(right.length).fill(200));
    expect(new Set(right.map((r) => `${r.res.body.access_token as string}/${r.res.body.refresh_token as string}`)).size).toBe(1);
    for (const r of results.filter((x) => x.caller !== client)) expectRefused(r.res);
    expect(await revokedAt(grantId)).toBeNull();
  });
});

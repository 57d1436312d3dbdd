import { afterEach, describe, expect, it, vi } from 'vitest';
import { introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import type { OAuthTestServer } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const DAY = 86_400;
const REDIRECT = 'https://app.example.org/callback';
// Two processes over one database share one clients file, as in a deployment.
const {
  testDatabase: t,
  server,
  staff,
  peers: { graceServer },
  clients: { client, graceClient },
} = useOAuthServer({
  peers: { graceServer: { refresh_reuse_grace_seconds: 10 } },
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT] },
    graceClient: { environment: 'production', redirectUris: [REDIRECT] },
  },
});
afterEach(() => {
  vi.useRealTimers();
});

const tokensFor = (s: OAuthTestServer, c: typeof client) =>
  obtainTokens(s, {
    environment: 'production',
    client: c,
    clientId: c.client_id,
    redirectUri: REDIRECT,
    scope: 'read_only',
    login: staff.users.member,
  });

describe('refresh token lifetime', () => {
  it('is min(now + 31 days, first issue + 365 days), and the authorization ends at 365 days', async () => {
    const start = new Date('2027-01-01T00:00:00Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const { tokens } = await tokensFor(server, client);
    const first = await introspect(server, 'production', client, tokens.body.refresh_token as string);
    expect(first.body.exp as number).toBe(start / 1000 + 31 * DAY);
    let refreshToken = tokens.body.refresh_token as string;
    // Refresh every 30 days: each new refresh token lives 31 days from its issue...
    for (let day = 30; day <= 330; day += 30) {
      vi.setSystemTime(start + day * DAY * 1000);
      const next = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(next.status).toBe(200);
      refreshToken = next.body.refresh_token as string;
      const seen = await introspect(server, 'production', client, refreshToken);
      expect(seen.body.exp as number).toBe(start / 1000 + (day + 31) * DAY);
    }
    // ...until 31 days would pass the 365-day ceiling of the first issue.
    vi.setSystemTime(start + 350 * DAY * 1000);
    const capped = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(capped.status).toBe(200);
    const cappedSeen = await introspect(server, 'production', client, capped.body.refresh_token as string);
    expect(cappedSeen.body.exp as number).toBe(start / 1000 + 365 * DAY);
    // Past 365 days nothing refreshes: the authorization has ended.
    vi.setSystemTime(start + 365 * DAY * 1000 + 1000);
    const ended = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: capped.body.refresh_token as string,
    });
    expect(ended.status).toBe(401);
  });

  it('dies after 31 days unused', async () => {
    const start = new Date('2027-06-01T00:00:00Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const { tokens } = await tokensFor(server, client);
    vi.setSystemTime(start + (31 * DAY + 1) * 1000);
    expect(
      (
        await tokenRequest(server, 'production', client, {
          grant_type: 'refresh_token',
          refresh_token: tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(401);
  });

  it('access tokens live 900 seconds', async () => {
    const start = new Date('2027-08-01T00:00:00Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const { tokens } = await tokensFor(server, client);
    expect((await introspect(server, 'production', client, tokens.body.access_token as string)).body).toMatchObject({
      active: true,
      exp: start / 1000 + 900,
    });
    vi.setSystemTime(start + 901 * 1000);
    expect((await introspect(server, 'production', client, tokens.body.access_token as string)).body).toEqual({ active: false });
  });
});

describe('concurrent presentations of one refresh token', () => {
  it('without a grace window: exactly one succeeds, none fails with 5xx, and the chain never forks', async () => {
    const { tokens } = await tokensFor(server, client);
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 401)).toBe(true);
    const live = await t.db
      .selectFrom('oidc_models')
      .select('id')
      .where('model', '=', 'RefreshToken')
      .where('consumed_at', 'is', null)
      .where(
        'grant_id',
        '=',
        (await t.db.selectFrom('oauth_authorizations').select('grant_id').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).grant_id,
      )
      .execute();
    expect(live.length).toBeLessThanOrEqual(1);
  });

  it('with refresh_reuse_grace_seconds: every duplicate in the window gets the same new pair', async () => {
    const { tokens } = await tokensFor(graceServer, graceClient);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        tokenRequest(graceServer, 'production', graceClient, {
          grant_type: 'refresh_token',
          refresh_token: tokens.body.refresh_token as string,
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const pairs = new Set(results.map((r) => `${r.body.access_token as string}/${r.body.refresh_token as string}`));
    expect(pairs.size).toBe(1);
    // The successor still works: the authorization was not revoked.
    const next = await tokenRequest(graceServer, 'production', graceClient, {
      grant_type: 'refresh_token',
      refresh_token: results[0]!.body.refresh_token as string,
    });
    expect(next.status).toBe(200);
    // A stored successor is readable only with the refresh token it answers.
    const stored = await t.db.selectFrom('oidc_refresh_successors').select('ciphertext').execute();
    for (const row of stored) expect(row.ciphertext).not.toContain(results[0]!.body.access_token as string);
  });

  it('with a grace window, a duplicate after the window still revokes the authorization', async () => {
    const { tokens } = await tokensFor(graceServer, graceClient);
    const first = await tokenRequest(graceServer, 'production', graceClient, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(first.status).toBe(200);
    await t.db
      .updateTable('oidc_models')
      .set({ consumed_at: new Date(Date.now() - 60_000) })
      .where('model', '=', 'RefreshToken')
      .where('consumed_at', 'is not', null)
      .execute();
    const late = await tokenRequest(graceServer, 'production', graceClient, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(late.status).toBe(401);
    expect(
      (
        await tokenRequest(graceServer, 'production', graceClient, {
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token as string,
        })
      ).status,
    ).toBe(401);
  });
});

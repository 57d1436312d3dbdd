/**
 * With refresh_reuse_grace_seconds > 0, a refresh's successor pair (the answer a duplicate
 * inside the window gets again) is written in the same transaction as the rotation it
 * answers: a failure to store the pair leaves the presented refresh token unconsumed and no
 * new token stored, so the client's retry simply refreshes; never a rotated token whose pair
 * was lost (a retry would wait for it, then be refused invalid_grant).
 */
import { describe, expect, it } from 'vitest';
import { hashId } from '../../src/db/provider-store.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { sql } from 'kysely';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients,
} = useOAuthServer({
  config: { refresh_reuse_grace_seconds: 300 },
  clients: { client: { environment: 'production', redirectUris: [REDIRECT] } },
});

async function freshRefreshToken(): Promise<string> {
  const { tokens } = await obtainTokens(server, {
    environment: 'production',
    client: clients.client,
    clientId: clients.client.client_id,
    redirectUri: REDIRECT,
    scope: 'read_only',
    login: staff.users.member,
  });
  expect(tokens.status).toBe(200);
  return tokens.body.refresh_token as string;
}

const refresh = (refreshToken: string) =>
  tokenRequest(server, 'production', clients.client, { grant_type: 'refresh_token', refresh_token: refreshToken });

async function tokenState(refreshToken: string) {
  const row = await t.db
    .selectFrom('oidc_models')
    .select(['consumed_at', 'grant_id'])
    .where('model', '=', 'RefreshToken')
    .where('id', '=', hashId(refreshToken))
    .executeTakeFirstOrThrow();
  const tokens = await t.db
    .selectFrom('oidc_models')
    .select('model')
    .where('grant_id', '=', row.grant_id)
    .where('model', 'in', ['AccessToken', 'RefreshToken'])
    .execute();
  const successors = await t.db.selectFrom('oidc_refresh_successors').select('id').where('id', '=', hashId(refreshToken)).execute();
  return { consumedAt: row.consumed_at, tokens: tokens.length, successors: successors.length };
}

describe('refresh grace window: the successor pair commits with the rotation', () => {
  it('a refresh answered 200 has its successor pair stored by the time the answer arrives', async () => {
    const refreshToken = await freshRefreshToken();
    const first = await refresh(refreshToken);
    expect(first.status).toBe(200);
    const state = await tokenState(refreshToken);
    expect(state.consumedAt).toBeInstanceOf(Date);
    expect(state.successors).toBe(1);
  });

  it('when the pair cannot be stored, the rotation is rolled back: the token stays unconsumed, nothing is issued, a retry refreshes', async () => {
    const refreshToken = await freshRefreshToken();
    const before = await tokenState(refreshToken);
    // Every new successor row now fails in the database (existing rows are not checked).
    await sql`alter table oidc_refresh_successors add constraint refuse_new_rows check (false) not valid`.execute(t.db);
    try {
      const failed = await refresh(refreshToken);
      expect(failed.status).not.toBe(200);
      expect(failed.body.access_token).toBeUndefined();
      expect(failed.body.refresh_token).toBeUndefined();
      const after = await tokenState(refreshToken);
      expect(after.consumedAt).toBeNull();
      expect(after.tokens).toBe(before.tokens);
      expect(after.successors).toBe(0);
    } finally {
      await sql`alter table oidc_refresh_successors drop constraint refuse_new_rows`.execute(t.db);
    }
    const retry = await refresh(refreshToken);
    expect(retry.status).toBe(200);
    expect((await tokenState(refreshToken)).successors).toBe(1);
  });
});

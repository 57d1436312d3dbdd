import crypto from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureSigningKeys } from '../../src/oidc/keys.js';
import { testBox, TEST_SECRETS_KEY } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { authorize, endpoints, exchangeCode, type Env } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

const ENVS: Env[] = ['production', 'sandbox'];
const ALGS = ['RS256', 'ES256'] as const;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'priv', 'k'];

const { testDatabase: t, server, staff } = useOAuthServer();

interface KeyRow {
  environment: string;
  kid: string;
  alg: string;
  state: string;
  retire_after: Date | null;
  private_jwk: unknown;
}

async function keyRows(db = t.db): Promise<KeyRow[]> {
  return (await db
    .selectFrom('signing_keys')
    .select(['environment', 'kid', 'alg', 'state', 'retire_after', 'private_jwk'])
    .execute()) as KeyRow[];
}

/** The stored private key, opened with the test master key (keys are sealed at rest). */
function jwkOf(row: KeyRow): Record<string, unknown> {
  const stored = (typeof row.private_jwk === 'string' ? JSON.parse(row.private_jwk) : row.private_jwk) as { sealed: string };
  return JSON.parse(testBox.open(stored.sealed)) as Record<string, unknown>;
}

function kidOf(rows: KeyRow[], environment: Env, alg: string, state: string): string {
  const matching = rows.filter((r) => r.environment === environment && r.alg === alg && r.state === state);
  expect(matching, `${environment} ${alg} ${state}`).toHaveLength(1);
  return matching[0]!.kid;
}

async function jwks(environment: Env): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${endpoints(server, environment).api}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { keys: Record<string, unknown>[] };
  expect(Array.isArray(body.keys)).toBe(true);
  return body.keys;
}

/** Polls the JWKS until it holds every kid in `wanted` (the key watcher polls every 5 s). */
async function jwksEventuallyHas(environment: Env, wanted: string[], withinMs = 8_000): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + withinMs;
  let keys = await jwks(environment);
  while (!wanted.every((kid) => keys.some((k) => k.kid === kid)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    keys = await jwks(environment);
  }
  expect(keys.map((k) => k.kid)).toEqual(expect.arrayContaining(wanted));
  return keys;
}

async function admin(argv: string[]) {
  return runAdmin(argv, { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: server.config.clients_file, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY });
}

function decodeHeader(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Verifies a compact JWS against a public JWK (RS256 only here). */
function verifies(jwt: string, jwk: Record<string, unknown>): boolean {
  const [header, payload, signature] = jwt.split('.');
  const key = crypto.createPublicKey({ key: jwk as crypto.JsonWebKey, format: 'jwk' });
  return crypto.verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature!, 'base64url'));
}

const redirectUriFor = (environment: Env) =>
  environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback';

/** A full authorization-code flow with openid; returns the id_token. */
async function issueIdToken(environment: Env): Promise<string> {
  const redirectUri = redirectUriFor(environment);
  const client = await server.registerClient({ environment, redirectUris: [redirectUri] });
  const result = await authorize(server, {
    environment,
    clientId: client.client_id,
    redirectUri,
    scope: 'openid read_only',
    login: staff.users.member,
  });
  const { as, client: c, response } = await exchangeCode(server, environment, client, result, redirectUri);
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: result.nonce, requireIdToken: true });
  expect(tokens.id_token).toBeTruthy();
  return tokens.id_token!;
}

describe('ensureSigningKeys', () => {
  it('creates a current and a next key for RS256 and ES256 in each environment, once', async () => {
    const fresh = await createTestDatabase();
    try {
      expect(await keyRows(fresh.db)).toHaveLength(0);
      await ensureSigningKeys(fresh.db, testBox);
      const rows = await keyRows(fresh.db);
      expect(rows).toHaveLength(8);
      for (const environment of ENVS) {
        for (const alg of ALGS) {
          for (const state of ['current', 'next']) {
            const matching = rows.filter((r) => r.environment === environment && r.alg === alg && r.state === state);
            expect(matching, `${environment} ${alg} ${state}`).toHaveLength(1);
            const jwk = jwkOf(matching[0]!);
            expect(jwk).toMatchObject({ kid: matching[0]!.kid, alg, use: 'sig', kty: alg === 'RS256' ? 'RSA' : 'EC' });
            if (alg === 'ES256') expect(jwk.crv).toBe('P-256');
            // It is a private key: the server can sign with it.
            expect(jwk.d).toEqual(expect.any(String));
          }
        }
      }
      expect(new Set(rows.map((r) => r.kid)).size).toBe(8);
      // Idempotent: a second start adds nothing and changes nothing.
      await ensureSigningKeys(fresh.db, testBox);
      const again = await keyRows(fresh.db);
      expect(again.map((r) => `${r.kid}:${r.state}`).sort()).toEqual(rows.map((r) => `${r.kid}:${r.state}`).sort());
    } finally {
      await fresh.drop();
    }
  });
});

describe('JWKS endpoint', () => {
  it.each(ENVS)('publishes the public parts of the current and next keys (%s)', async (environment) => {
    const rows = (await keyRows()).filter((r) => r.environment === environment);
    const keys = await jwks(environment);
    for (const key of keys) {
      for (const member of PRIVATE_MEMBERS) expect(key, `${String(key.kid)} ${member}`).not.toHaveProperty(member);
      expect(key.use).toBe('sig');
    }
    expect(keys.map((k) => k.kid).sort()).toEqual(rows.map((r) => r.kid).sort());
    for (const alg of ALGS) {
      for (const state of ['current', 'next']) {
        const kid = kidOf(rows, environment, alg, state);
        const published = keys.find((k) => k.kid === kid)!;
        expect(published).toBeDefined();
        expect(published.alg).toBe(alg);
        // The published key is the public half of the stored private key.
        const stored = jwkOf(rows.find((r) => r.kid === kid)!);
        const members = alg === 'RS256' ? ['kty', 'n', 'e'] : ['kty', 'crv', 'x', 'y'];
        for (const m of members) expect(published[m]).toBe(stored[m]);
      }
    }
  });

  it('gives production and sandbox disjoint key sets', async () => {
    const production = (await jwks('production')).map((k) => k.kid);
    const sandbox = (await jwks('sandbox')).map((k) => k.kid);
    expect(production.length).toBeGreaterThan(0);
    expect(sandbox.length).toBeGreaterThan(0);
    expect(production.filter((kid) => sandbox.includes(kid))).toEqual([]);
  });

  it.each(ENVS)('signs id_tokens with the current RS256 key, not the published next one (%s)', async (environment) => {
    const rows = await keyRows();
    const idToken = await issueIdToken(environment);
    const header = decodeHeader(idToken);
    expect(header.alg).toBe('RS256');
    expect(header.kid).toBe(kidOf(rows, environment, 'RS256', 'current'));
    expect(header.kid).not.toBe(kidOf(rows, environment, 'RS256', 'next'));
    const published = (await jwks(environment)).find((k) => k.kid === header.kid)!;
    expect(verifies(idToken, published)).toBe(true);
  });
});

describe('keys rotate', () => {
  let before: KeyRow[];
  let printed: {
    kid: string;
    kids: string[];
    keys: { environment: string; kid: string; alg: string; state: string; retire_after: string | null }[];
  };

  beforeAll(async () => {
    before = await keyRows();
    const r = await admin(['keys', 'rotate', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    printed = JSON.parse(r.stdout) as typeof printed;
  });

  it('prints the new kid, the promoted kids and every key with its state', () => {
    expect(printed.kid).toEqual(expect.any(String));
    expect(printed.kids).toHaveLength(4);
    expect(printed.kids).toContain(printed.kid);
    const previouslyNext = before.filter((r) => r.state === 'next').map((r) => r.kid);
    expect([...printed.kids].sort()).toEqual([...previouslyNext].sort());
    expect(printed.kid).toBe(kidOf(before, 'production', 'RS256', 'next'));
    for (const key of printed.keys) {
      expect(key).toEqual(
        expect.objectContaining({
          environment: expect.any(String),
          kid: expect.any(String),
          alg: expect.any(String),
          state: expect.stringMatching(/^(current|next|previous)$/),
        }),
      );
      expect(key).not.toHaveProperty('private_jwk');
      expect(key).not.toHaveProperty('d');
    }
    expect(JSON.stringify(printed)).not.toMatch(/"d"\s*:/);
  });

  it('promotes next to current, keeps the old current as previous until later, and adds a fresh next', async () => {
    const after = await keyRows();
    for (const environment of ENVS) {
      for (const alg of ALGS) {
        const oldCurrent = kidOf(before, environment, alg, 'current');
        const oldNext = kidOf(before, environment, alg, 'next');
        expect(kidOf(after, environment, alg, 'current')).toBe(oldNext);
        const previous = after.find((r) => r.kid === oldCurrent)!;
        expect(previous.state).toBe('previous');
        expect(previous.retire_after).toBeInstanceOf(Date);
        expect(previous.retire_after!.getTime()).toBeGreaterThan(Date.now());
        const newNext = kidOf(after, environment, alg, 'next');
        expect(before.some((r) => r.kid === newNext)).toBe(false);
        // The printed states say the same.
        const state = (kid: string) => printed.keys.find((k) => k.kid === kid)?.state;
        expect(state(oldNext)).toBe('current');
        expect(state(oldCurrent)).toBe('previous');
        expect(state(newNext)).toBe('next');
        expect(new Date(printed.keys.find((k) => k.kid === oldCurrent)!.retire_after!).getTime()).toBeGreaterThan(Date.now());
      }
    }
  });

  it.each(ENVS)('the running server publishes the previous, current and new next keys (%s)', async (environment) => {
    const after = await keyRows();
    const wanted = ALGS.flatMap((alg) => [
      kidOf(before, environment, alg, 'current'),
      kidOf(after, environment, alg, 'current'),
      kidOf(after, environment, alg, 'next'),
    ]);
    const keys = await jwksEventuallyHas(environment, wanted);
    for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    const other = environment === 'production' ? 'sandbox' : 'production';
    const otherKids = after.filter((r) => r.environment === other).map((r) => r.kid);
    expect(keys.filter((k) => otherKids.includes(k.kid as string))).toEqual([]);
  });

  it.each(ENVS)('an id_token issued after the rotation is signed with the new current RS256 key (%s)', async (environment) => {
    const after = await keyRows();
    const newCurrent = kidOf(after, environment, 'RS256', 'current');
    await jwksEventuallyHas(environment, [kidOf(after, environment, 'RS256', 'next')]);
    const idToken = await issueIdToken(environment);
    const header = decodeHeader(idToken);
    expect(header.kid).toBe(newCurrent);
    expect(header.kid).not.toBe(kidOf(before, environment, 'RS256', 'current'));
    const published = (await jwks(environment)).find((k) => k.kid === newCurrent)!;
    expect(verifies(idToken, published)).toBe(true);
  });

  it('a second rotation keeps both previous keys published and promotes again', async () => {
    const mid = await keyRows();
    const r = await admin(['keys', 'rotate', '--json']);
    expect(r.code).toBe(0);
    const after = await keyRows();
    for (const environment of ENVS) {
      for (const alg of ALGS) {
        expect(kidOf(after, environment, alg, 'current')).toBe(kidOf(mid, environment, alg, 'next'));
        const previous = after.filter((k) => k.environment === environment && k.alg === alg && k.state === 'previous').map((k) => k.kid);
        expect(previous.sort()).toEqual([kidOf(before, environment, alg, 'current'), kidOf(mid, environment, alg, 'current')].sort());
      }
      await jwksEventuallyHas(
        environment,
        after.filter((k) => k.environment === environment).map((k) => k.kid),
      );
    }
  });
});

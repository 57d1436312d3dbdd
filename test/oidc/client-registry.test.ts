import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { createLogger } from '../../src/logging/logger.js';
import { ClientRegistryError } from '../../src/oidc/clients/schema.js';
import { generateClientSecret, hashClientSecret } from '../../src/oidc/clients/service.js';
import { CLIENT_CACHE_MS } from '../../src/oidc/client-adapter.js';
import { createRuntime } from '../../src/runtime.js';
import { tempDir, testConfig } from '../helpers/app.js';
import { basic, type Env } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

interface Credentials {
  client_id: string;
  client_secret: string;
}

async function admin(argv: string[]) {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], {
    DATABASE_URL: t.url,
    ALMONER_CLIENTS_FILE: server.config.clients_file,
  });
  if (code !== 0) throw new Error(`admin ${argv.join(' ')} exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as Record<string, unknown>;
}

function tokenUrl(environment: Env): string {
  return `${environment === 'production' ? server.urls.api : server.urls.sandboxApi}/auth/oauth/token`;
}

/** A refresh grant with a bogus token: invalid_grant means the client authenticated, invalid_client that it did not. */
async function probe(environment: Env, credentials: Credentials | undefined, form: Record<string, string> = {}) {
  const response = await fetch(tokenUrl(environment), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(credentials ? { authorization: basic(credentials.client_id, credentials.client_secret) } : {}),
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'bogus', ...form }),
  });
  const text = await response.text();
  return { status: response.status, error: (text ? (JSON.parse(text) as { error?: string }) : {}).error };
}

const AUTHENTICATED = { status: 401, error: 'invalid_grant' };
const REFUSED = { status: 401, error: 'invalid_client' };

/** Polls until the probe gives `expected`, failing after `withinMs` with the last answer. */
async function eventually(environment: Env, credentials: Credentials, expected: typeof AUTHENTICATED, withinMs: number) {
  // performance.now(): the tests below stop Date, which must not stop this deadline.
  const deadline = performance.now() + withinMs;
  let last = await probe(environment, credentials);
  while (!(last.status === expected.status && last.error === expected.error) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await probe(environment, credentials);
  }
  expect(last).toEqual(expected);
}

/**
 * What waiting a few seconds used to stand for, without the wait: the server's poller makes a
 * pass over the clients file (the same syncNow its timer runs), and the clock moves past the
 * time a registration read is reused, so the next request reads the registration afresh.
 */
async function afterPollAndCacheTime(): Promise<void> {
  await server.runtime.clients.syncNow();
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + CLIENT_CACHE_MS });
  onTestFinished(() => void vi.useRealTimers());
}

function addArgs(environment: Env, name = 'Live App'): string[] {
  return [
    'clients',
    'add',
    '--environment',
    environment,
    '--name',
    name,
    '--redirect-uri',
    environment === 'sandbox' ? 'http://127.0.0.1:8080/cb' : 'https://app.example.org/cb',
    '--scope',
    'read_only openid',
  ];
}

describe('startup with an invalid clients file', () => {
  function badFile(clients: unknown[]): string {
    const file = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(file, JSON.stringify({ clients }));
    return file;
  }

  async function goodEntry(clientId: string) {
    return {
      environment: 'production',
      client_id: clientId,
      client_secret_hash: await hashClientSecret(generateClientSecret(), MIN_PASSWORD_PARAMS),
      name: 'Broken',
      redirect_uris: ['https://app.example.org/cb'],
      scopes: ['read_only'],
    };
  }

  it('refuses to start, naming the client, the field and the rule', async () => {
    const entry = { ...(await goodEntry('live_badquery01')), redirect_uris: ['https://app.example.org/cb?x=1'] };
    const config = testConfig({ clients_file: badFile([entry]) });
    const error = await createRuntime(config, t.db, createLogger('silent')).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toContain('live_badquery01');
    expect(error!.message).toMatch(/redirect_uris/);
    expect(error!.message).toMatch(/query/);
  });

  it('refuses an unknown field, a bad scope and an organization client with openid, each named', async () => {
    const unknown = { ...(await goodEntry('live_badfield01')), colour: 'blue' };
    const scope = { ...(await goodEntry('live_badscope01')), scopes: ['read_only', 'admin'] };
    const org = { ...(await goodEntry('live_badorg0001')), subject_type: 'organization', scopes: ['read_only', 'openid'] };
    const config = testConfig({ clients_file: badFile([unknown, scope, org]) });
    const error = await createRuntime(config, t.db, createLogger('silent')).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/live_badfield01[^;]*colour[^;]*not a known field/);
    expect(error!.message).toMatch(/live_badscope01[^;]*scopes/);
    expect(error!.message).toMatch(/live_badorg0001[^;]*scopes[^;]*openid/);
  });

  it('refuses a file that is not JSON', async () => {
    const file = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(file, '{"clients": [');
    await expect(createRuntime(testConfig({ clients_file: file }), t.db, createLogger('silent'))).rejects.toThrow(/JSON/);
  });

  it('a refused start leaves the registry in the database as it was', async () => {
    const created = (await admin(addArgs('production', 'Survivor'))) as unknown as Credentials;
    const entry = { ...(await goodEntry('live_badpath001')), redirect_uris: ['https://app.example.org/'] };
    await expect(createRuntime(testConfig({ clients_file: badFile([entry]) }), t.db, createLogger('silent'))).rejects.toThrow(
      /live_badpath001/,
    );
    expect(
      await t.db.selectFrom('oauth_clients').select('client_id').where('client_id', '=', created.client_id).executeTakeFirst(),
    ).toBeDefined();
    expect(
      await t.db.selectFrom('oauth_clients').select('client_id').where('client_id', '=', 'live_badpath001').executeTakeFirst(),
    ).toBeUndefined();
    await eventually('production', created, AUTHENTICATED, 5_000);
  });
});

describe('registry changes are live in a running server, without a restart', () => {
  it('a client added with the CLI authenticates within 5 seconds', async () => {
    const created = (await admin(addArgs('sandbox'))) as unknown as Credentials;
    await eventually('sandbox', created, AUTHENTICATED, 5_000);
  });

  it('after rotate-secret the old secret is refused at once and the new one works (no stale cache)', async () => {
    const created = (await admin(addArgs('production'))) as unknown as Credentials;
    await eventually('production', created, AUTHENTICATED, 5_000);
    // A second success: the secret check is now answered from the cache.
    expect(await probe('production', created)).toEqual(AUTHENTICATED);
    const rotated = (await admin(['clients', 'rotate-secret', '--client-id', created.client_id])) as unknown as Credentials;
    expect(rotated.client_id).toBe(created.client_id);
    expect(rotated.client_secret).not.toBe(created.client_secret);
    await eventually('production', rotated, AUTHENTICATED, 5_000);
    expect(await probe('production', created)).toEqual(REFUSED);
    // And it stays refused (the refusal is not a race with the sync).
    await afterPollAndCacheTime();
    expect(await probe('production', created)).toEqual(REFUSED);
    expect(await probe('production', rotated)).toEqual(AUTHENTICATED);
  });

  it('a removed client is refused', async () => {
    const created = (await admin(addArgs('sandbox'))) as unknown as Credentials;
    await eventually('sandbox', created, AUTHENTICATED, 5_000);
    await admin(['clients', 'remove', '--client-id', created.client_id]);
    await eventually('sandbox', created, REFUSED, 5_000);
    await afterPollAndCacheTime();
    expect(await probe('sandbox', created)).toEqual(REFUSED);
  });

  it('a hand edit of the clients file is picked up by the polling server', async () => {
    const file = server.config.clients_file;
    const secret = generateClientSecret();
    const entry = {
      environment: 'production',
      client_id: 'live_handedit0001',
      client_secret_hash: await hashClientSecret(secret, MIN_PASSWORD_PARAMS),
      name: 'Hand Edited',
      redirect_uris: ['https://hand.example.org/cb'],
      scopes: ['read_only'],
    };
    const credentials = { client_id: entry.client_id, client_secret: secret };
    expect(await probe('production', credentials)).toEqual(REFUSED);
    const document = JSON.parse(fs.readFileSync(file, 'utf8')) as { clients: unknown[] };
    fs.writeFileSync(file, `${JSON.stringify({ clients: [...document.clients, entry] }, null, 2)}\n`);
    await eventually('production', credentials, AUTHENTICATED, 8_000);

    // Removing it by hand is picked up too.
    fs.writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
    await eventually('production', credentials, REFUSED, 8_000);
  });

  it('a broken hand edit is ignored: the last good registry stays live', async () => {
    const file = server.config.clients_file;
    const created = (await admin(addArgs('production'))) as unknown as Credentials;
    await eventually('production', created, AUTHENTICATED, 5_000);
    const good = fs.readFileSync(file, 'utf8');
    const document = JSON.parse(good) as { clients: Record<string, unknown>[] };
    const broken = { clients: document.clients.map((c) => ({ ...c, redirect_uris: ['https://app.example.org/cb?x=1'] })) };
    fs.writeFileSync(file, JSON.stringify(broken));
    try {
      // A poll of the broken file fails (the poller logs it and keeps the last good registry)...
      await expect(server.runtime.clients.syncNow()).rejects.toThrow(ClientRegistryError);
      // ...so the registration read afresh, once the cache time is over, is the good one.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + CLIENT_CACHE_MS });
      onTestFinished(() => void vi.useRealTimers());
      expect(await probe('production', created)).toEqual(AUTHENTICATED);
      const row = await t.db
        .selectFrom('oauth_clients')
        .select('redirect_uris')
        .where('client_id', '=', created.client_id)
        .executeTakeFirstOrThrow();
      expect(row.redirect_uris).toEqual(['https://app.example.org/cb']);
    } finally {
      fs.writeFileSync(file, good);
    }
  });
});

describe('client authentication at the token endpoint', () => {
  let sandbox: Credentials;
  let production: Credentials;
  beforeAll(async () => {
    sandbox = (await admin(addArgs('sandbox', 'Sandbox App'))) as unknown as Credentials;
    production = (await admin(addArgs('production', 'Production App'))) as unknown as Credentials;
    await eventually('sandbox', sandbox, AUTHENTICATED, 5_000);
    await eventually('production', production, AUTHENTICATED, 5_000);
  });

  it("refuses a client at the other environment's token endpoint", async () => {
    expect(await probe('production', sandbox)).toEqual(REFUSED);
    expect(await probe('sandbox', production)).toEqual(REFUSED);
  });

  it('refuses a wrong secret, and a secret of another client', async () => {
    expect(await probe('production', { client_id: production.client_id, client_secret: `${production.client_secret}x` })).toEqual(REFUSED);
    expect(await probe('production', { client_id: production.client_id, client_secret: 'wrong' })).toEqual(REFUSED);
    expect(await probe('sandbox', { client_id: sandbox.client_id, client_secret: production.client_secret })).toEqual(REFUSED);
    expect(await probe('production', { client_id: 'live_nosuchclient', client_secret: production.client_secret })).toEqual(REFUSED);
  });

  it('refuses client_id and client_secret in the form body (HTTP Basic only)', async () => {
    const r = await probe('production', undefined, { client_id: production.client_id, client_secret: production.client_secret });
    expect(r).toEqual(REFUSED);
    expect(await probe('sandbox', undefined, { client_id: sandbox.client_id, client_secret: sandbox.client_secret })).toEqual(REFUSED);
  });

  it('refuses Basic credentials accompanied by a client_secret in the body', async () => {
    expect(await probe('production', production, { client_secret: production.client_secret })).toEqual(REFUSED);
    expect(await probe('production', production, { client_id: production.client_id, client_secret: production.client_secret })).toEqual(
      REFUSED,
    );
  });

  it('refuses a client_id without a secret, and a request with no client at all', async () => {
    expect(await probe('production', undefined, { client_id: production.client_id })).toEqual(REFUSED);
    expect(await probe('sandbox', undefined, { client_id: sandbox.client_id })).toEqual(REFUSED);
    const none = await probe('production', undefined);
    expect([400, 401]).toContain(none.status);
    expect(['invalid_request', 'invalid_client']).toContain(none.error);
  });

  it('answers invalid_client with a Basic challenge', async () => {
    const response = await fetch(tokenUrl('production'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(production.client_id, 'wrong') },
      body: 'grant_type=refresh_token&refresh_token=bogus',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/i);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
  });
});

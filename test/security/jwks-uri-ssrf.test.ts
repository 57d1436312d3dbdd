/**
 * Attack: server-side request forgery through a bank-data client's jwks_uri. The server fetches
 * the JWK Set a fapi2 client names whenever a request names the client and its keys are not
 * cached, so a jwks_uri on a loopback, private or metadata address makes the server connect
 * there, and an anonymous flood of token requests (assertions signed by any key) makes it
 * connect on every request while the fetch keeps failing.
 * Protection: the webhook address rules (https to public addresses in production; the dev
 * profile also allows http on loopback) at registration (`clients add`, the clients file) and
 * again at every fetch, on every address the name resolves to, on the connection itself; one
 * fetch has a deadline; a failed address is left alone for a minute.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { addFapi2Client, validateClientsFile, type RegistryContext } from '../../src/oidc/clients/service.js';
import { keySetFetch } from '../../src/oidc/key-set-fetch.js';
import { ASSERTION_TYPE, clientAssertion, FAPI_REDIRECT, keyPair, publicJwk } from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';
import { tempDir } from '../helpers/temp-dirs.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

/** A TCP listener on loopback that counts connections and drops each at once. */
async function countingListener() {
  const seen = { connections: 0 };
  const listener = net.createServer((socket) => {
    seen.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as net.AddressInfo).port;
  return { seen, port, close: () => new Promise<void>((resolve) => listener.close(() => resolve())) };
}

const registry = (target: OAuthTestServer, db = t.db): RegistryContext => ({
  db,
  clientsFile: target.config.clients_file,
  passwordParams: MIN_PASSWORD_PARAMS,
  profile: target.config.profile,
});

const fapiInput = (jwksUri: string) => ({
  environment: 'production',
  name: 'Key-set client',
  redirectUris: [FAPI_REDIRECT.production],
  scopes: ['openid', 'offline_access', 'read_only'],
  ipAllowList: ['127.0.0.0/8'],
  jwksUri,
});

/** A client-credentials request naming the client, signed by a key nobody registered (what anyone can send). */
async function anonymousTokenRequest(target: OAuthTestServer, clientId: string, headers: Record<string, string> = {}) {
  const key = await keyPair();
  const issuer = target.config.base_url;
  const response = await fetch(`${target.urls.api}/auth/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await dpopProof(key, { method: 'POST', url: `${issuer}/auth/oauth/token` }),
      ...headers,
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await clientAssertion({ client_id: clientId, as: { issuer } }, key),
    }),
  });
  return { status: response.status, body: (await response.json()) as { error?: string } };
}

describe('registering a jwks_uri', () => {
  const INTERNAL = [
    'https://127.0.0.1/jwks.json',
    'https://localhost/jwks.json',
    'https://keys.localhost/jwks.json',
    'https://10.1.2.3/jwks.json',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/jwks.json',
    'https://[::ffff:a9fe:a9fe]/jwks.json',
    'https://[64:ff9b::a9fe:a9fe]/jwks.json',
    'http://keys.example.org/jwks.json',
  ];

  it('in production, refuses every internal host (and http) at `clients add`, and accepts a public https URL', async () => {
    const production = { ...registry(server), profile: 'production' as const };
    for (const uri of INTERNAL) {
      await expect(addFapi2Client(production, fapiInput(uri)), uri).rejects.toThrow(/jwks_uri: must (point to a public address|use https)/);
    }
    await expect(addFapi2Client(production, fapiInput('https://keys.example.org/jwks.json'))).resolves.toMatchObject({ profile: 'fapi2' });
  });

  it('in production, a clients file naming an internal jwks_uri is invalid; the dev profile takes loopback, as for webhooks', () => {
    const file = path.join(tempDir(), 'clients.json');
    const entry = (jwks_uri: string) => ({
      environment: 'production',
      client_id: `live_${Buffer.from(jwks_uri).toString('hex').slice(0, 24)}`,
      profile: 'fapi2',
      jwks_uri,
      name: 'Key-set client',
      redirect_uris: [FAPI_REDIRECT.production],
      scopes: ['read_only'],
    });
    fs.writeFileSync(file, JSON.stringify({ clients: [entry('https://127.0.0.1:8443/jwks.json'), entry('http://[::1]:8080/jwks.json')] }));
    const production = validateClientsFile(file, 'production');
    expect(production.valid).toBe(false);
    expect(!production.valid && production.problems).toEqual([
      expect.stringMatching(/jwks_uri: must point to a public address in production$/),
      expect.stringMatching(/jwks_uri: must use https in production$/),
    ]);
    expect(validateClientsFile(file, 'dev').valid).toBe(true);
    fs.writeFileSync(file, JSON.stringify({ clients: [entry('http://10.1.2.3/jwks.json')] }));
    expect(validateClientsFile(file, 'dev')).toMatchObject({
      valid: false,
      problems: [expect.stringMatching(/http is allowed on loopback/)],
    });
  });
});

describe('fetching a jwks_uri in production', () => {
  let db: TestDatabase;
  let production: OAuthTestServer;
  beforeAll(async () => {
    db = await createTestDatabase();
    production = await startOAuthServer(db.db, {}, undefined, { behindLoopbackProxy: true });
  });
  afterAll(async () => {
    await production?.close();
    await db?.drop();
  });

  it('never connects to a loopback address stored before the rules (or past them), however many requests name the client', async () => {
    const target = await countingListener();
    try {
      const { client_id } = await addFapi2Client(registry(production, db.db), fapiInput('https://keys.example.org/jwks.json'));
      // As a registration from before these rules would have it.
      await db.db
        .updateTable('oauth_clients')
        .set({ jwks_uri: `https://127.0.0.1:${target.port}/jwks.json` })
        .where('client_id', '=', client_id)
        .execute();
      for (let i = 0; i < 5; i += 1) {
        const answer = await anonymousTokenRequest(production, client_id, { 'x-forwarded-proto': 'https' });
        expect(answer).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      }
      expect(target.seen.connections).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('refuses a name that resolves to an internal address, on the connection itself', async () => {
    const target = await countingListener();
    try {
      const fetchKeys = keySetFetch({ profile: 'production', resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
      await expect(fetchKeys(`https://keys.example.org:${target.port}/jwks.json`)).rejects.toThrow(/non-public address 127\.0\.0\.1/);
      const rebinding = keySetFetch({
        profile: 'production',
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '::ffff:169.254.169.254', family: 6 },
        ],
      });
      await expect(rebinding(`https://keys.example.org:${target.port}/jwks.json`)).rejects.toThrow(/non-public address/);
      expect(target.seen.connections).toBe(0);
    } finally {
      await target.close();
    }
  });
});

describe('a jwks_uri that fails', () => {
  it('is connected to once for an anonymous flood of token requests, then left alone', async () => {
    const target = await countingListener();
    try {
      const { client_id } = await addFapi2Client(registry(server), fapiInput(`https://127.0.0.1:${target.port}/jwks.json`));
      for (let i = 0; i < 10; i += 1) {
        expect(await anonymousTokenRequest(server, client_id)).toMatchObject({
          status: 401,
          body: { error: 'invalid_client' },
        });
      }
      expect(target.seen.connections).toBe(1);
    } finally {
      await target.close();
    }
  });

  it('is tried again once the back-off has passed; a fetch that hangs ends at its deadline', async () => {
    const target = await countingListener();
    let now = 1_000_000;
    const fetchKeys = keySetFetch({ profile: 'dev', backoffMs: 60_000, now: () => now });
    const url = `http://127.0.0.1:${target.port}/jwks.json`;
    try {
      await expect(fetchKeys(url)).rejects.toThrow();
      await expect(fetchKeys(url)).rejects.toThrow(/failed recently/);
      expect(target.seen.connections).toBe(1);
      now += 60_000;
      await expect(fetchKeys(url)).rejects.toThrow();
      expect(target.seen.connections).toBe(2);
    } finally {
      await target.close();
    }
    // A listener that accepts and never answers.
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const hanging = keySetFetch({ profile: 'dev', deadlineMs: 300 });
      await expect(hanging(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/jwks.json`)).rejects.toThrow(
        /timed out after 300 ms/,
      );
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('the dev profile fetches a key set served over http on loopback, and the client authenticates with it', async () => {
    const signingKey = await keyPair();
    const jwk = await publicJwk(signingKey, 'k1');
    const keys = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    try {
      const uri = `http://127.0.0.1:${(keys.address() as net.AddressInfo).port}/jwks.json`;
      const { client_id } = await addFapi2Client(registry(server), fapiInput(uri));
      const tokenUrl = `${server.urls.api}/auth/oauth/token`;
      const dpopKey = await keyPair();
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpopProof(dpopKey, { method: 'POST', url: tokenUrl }) },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await clientAssertion({ client_id, as: { issuer: server.config.base_url } }, signingKey),
        }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    } finally {
      keys.closeAllConnections?.();
      await new Promise((resolve) => keys.close(resolve));
    }
  });
});

import http from 'node:http';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { addClient } from '../../src/oidc/clients/service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { basic } from '../helpers/flow.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { checkGatewayResponse, isGatewayPath } from '../helpers/published-openapi.js';
import { makeDataDir, removeDataDir, spawnServer, type PublicUrls, type ServerProcess } from '../helpers/process.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Two server processes over one database, as behind a load balancer: B listens on its own
 * port but serves the same public hosts (routing is by Host). Requests alternate between them.
 */
let t: TestDatabase;
let dataDir: string;
let urls: PublicUrls;
let a: ServerProcess;
let b: ServerProcess;
let portB: number;
let staff: Staff;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
  const env = {
    DATABASE_URL: t.url,
    ALMONER_DATA_DIR: dataDir,
    ALMONER_CLIENTS_FILE: path.join(dataDir, 'clients.json'),
    ALMONER_DEMO_DATA: 'false',
    ALMONER_WEBHOOK_POLL_MS: '50',
  };
  // A binds its four URLs on ports of its own (port 0); B serves the same URLs on one port it binds itself.
  a = spawnServer({ env });
  await a.waitReady();
  urls = a.urls;
  const publicUrls = {
    ALMONER_BASE_URL: urls.api,
    ALMONER_SANDBOX_BASE_URL: urls.sandboxApi,
    ALMONER_DASHBOARD_URL: urls.dashboard,
    ALMONER_SANDBOX_DASHBOARD_URL: urls.sandboxDashboard,
  };
  b = spawnServer({ env: { ...env, ...publicUrls, ALMONER_LISTEN: '127.0.0.1:0' } });
  await b.waitReady(45_000, (ready) => `http://127.0.0.1:${ready.listening[0]!.port}`);
  portB = b.listening[0]!.port;
  staff = await createStaff(t.db);
}, 90_000);
afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await t?.drop();
  await removeDataDir(dataDir);
});

let turn = 0;
/** One HTTP exchange with the public authority of `url`, sent to process A or B in turn. */
function hop(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const port = turn++ % 2 === 0 ? Number(url.port) : portB;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: url.pathname + url.search, headers: { host: url.host, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const answer = { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
          try {
            // A gateway answer must be one its published operation allows, whichever process gave it.
            if (url.origin === new URL(urls.api).origin && isGatewayPath(url.pathname))
              checkGatewayResponse({
                method,
                path: url.pathname + url.search,
                requestHeaders: headers,
                status: answer.status,
                contentType: res.headers['content-type'],
                text: answer.text,
              });
            resolve(answer);
          } catch (error) {
            reject(error as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('two server processes on one database', () => {
  it('a code flow that hops between the processes on every request works end to end', async () => {
    const redirect = 'https://app.example.org/callback';
    const client = await addClient(
      { db: t.db, clientsFile: path.join(dataDir, 'clients.json'), passwordParams: MIN_PASSWORD_PARAMS },
      { environment: 'production', name: 'Hop App', redirectUris: [redirect], scopes: ['read_only', 'openid'] },
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const authorizeUrl = new URL(`${urls.dashboard}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'openid read_only',
      state: 's1',
      nonce: 'n1',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      authorizeUrl.searchParams.set(k, v);

    const cookies = new Map<string, string>();
    const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let url = authorizeUrl;
    let method = 'GET';
    let body: string | undefined;
    let code: string | null = null;
    for (let step = 0; step < 20 && !code; step += 1) {
      const res = await hop(
        url,
        method,
        {
          cookie: cookieHeader(),
          accept: 'text/html',
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin } : {}),
        },
        body,
      );
      for (const line of (res.headers['set-cookie'] ?? []) as string[]) {
        const [pair] = line.split(';');
        const [name, ...rest] = pair!.split('=');
        cookies.set(name!.trim(), rest.join('='));
      }
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.location!, url);
        if (next.origin === 'https://app.example.org') {
          code = next.searchParams.get('code');
          expect(next.searchParams.get('state')).toBe('s1');
          break;
        }
        [url, method, body] = [next, 'GET', undefined];
        continue;
      }
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(400);
      const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(
        res.text.includes('name="password"') ? res.text : res.text.replace(/[\s\S]*?(<form[^>]*action="[^"]*\/consent"[\s\S]*)/, '$1'),
      );
      if (!form) throw new Error(`no form at ${url}: ${res.text.slice(0, 300)}`);
      const hidden = Object.fromEntries(
        [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]),
      );
      const fields = res.text.includes('name="password"')
        ? { ...hidden, email: staff.users.member.email, password: staff.users.member.password }
        : hidden;
      [url, method, body] = [new URL(form[1]!.replace(/&amp;/g, '&'), url), 'POST', new URLSearchParams(fields).toString()];
    }
    expect(code).toBeTruthy();
    const exchange = await hop(
      new URL(`${urls.api}/auth/oauth/token`),
      'POST',
      { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
      new URLSearchParams({ grant_type: 'authorization_code', code: code!, code_verifier: verifier }).toString(),
    );
    expect(exchange.status, exchange.text).toBe(200);
    const tokens = JSON.parse(exchange.text) as { refresh_token: string; access_token: string };
    const refreshed = await hop(
      new URL(`${urls.api}/auth/oauth/token`),
      'POST',
      { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).toString(),
    );
    expect(refreshed.status).toBe(200);
    const call = await hop(new URL(`${urls.api}/v1/grants`), 'GET', {
      authorization: `Bearer ${(JSON.parse(refreshed.text) as { access_token: string }).access_token}`,
    });
    expect(call.status).toBe(200);
  }, 60_000);

  it('delivers each webhook once although both processes run a dispatcher', async () => {
    const receiver = await startReceiver();
    try {
      await addOrganization(t.db, { ein: '98-2020202', name: 'Two Proc Fund', kind: 'fund_provider' });
      const key = (await createApiKey(t.db, { org: '98-2020202', environment: 'production' })).key;
      const json = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
      const sub = await hop(
        new URL(`${urls.api}/v1/event_subscriptions`),
        'POST',
        json,
        JSON.stringify({ url: receiver.url, category: 'donor_account.created' }),
      );
      expect(sub.status).toBe(201);
      for (let i = 0; i < 30; i += 1) {
        const created = await hop(
          new URL(`${urls.api}/v1/donor_accounts`),
          'POST',
          json,
          JSON.stringify({ donor: { email: `donor${i}@example.org` } }),
        );
        expect(created.status).toBe(201);
      }
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(30);
      // Each POST follows a claim, and each claim counts an attempt: every delivery recorded as
      // succeeded after exactly one attempt means no dispatcher claimed one twice, so no second
      // POST of any of them can still be on its way.
      const subscriptionId = (JSON.parse(sub.text) as { id: string }).id;
      const deliveries = () =>
        t.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('subscription_id', '=', subscriptionId).execute();
      await expect.poll(async () => (await deliveries()).filter((d) => d.status === 'succeeded').length, { timeout: 15_000 }).toBe(30);
      expect((await deliveries()).map((d) => d.attempts)).toEqual(Array(30).fill(1));
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});

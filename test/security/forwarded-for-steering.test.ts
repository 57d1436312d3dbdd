/**
 * Attack: behind a trusted proxy (ALMONER_TRUSTED_PROXIES), a caller writes its own
 * X-Forwarded-For and makes the hop the proxy appended unreadable to the server
 * (`203.0.113.9:5555`, `[2001:db8::1]:443`, `unknown`, garbage), so that the address it
 * chose, further left, is taken as its own: IP allow-lists (/v1, FDX), /metrics and the
 * per-address sign-in throttle are then judged on a value the caller picked.
 * Protection: every hop is parsed strictly (IPv4, IPv6, IPv4:port, [IPv6]:port); the walk
 * from the right passes only trusted hops and stops at the first hop that is untrusted (the
 * caller) or unparseable (the caller is unknown: allow-lists and /metrics deny, the sign-in
 * throttle keys on the nearest trusted hop). Header lines are one list; `Forwarded` is not
 * read (src/http/client-address.ts).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { checkGatewayResponse } from '../helpers/published-openapi.js';
import { accessToken, seedData } from '../helpers/gateway.js';
import { createStaff, startOAuthServer, type OAuthTestServer, type Staff } from '../helpers/oauth-server.js';
import { signInFailuresPerCallerAddress } from '../../src/limits/rate-limits.js';

const REDIRECT = 'https://app.example.org/callback';
type Headers = Record<string, string | string[]>;

let t: TestDatabase;
let issuer: OAuthTestServer;
let proxied: OAuthTestServer;
let staff: Staff;

/** One request as the proxy sends it: repeated header lines stay separate lines on the wire. */
function send(
  url: string,
  options: { method?: string; headers?: Headers; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: { 'x-forwarded-proto': 'https', ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  issuer = await startOAuthServer(t.db, { ip_restricted_areas: ['donations', 'fdx'] });
  proxied = await startOAuthServer(
    t.db,
    { ip_restricted_areas: ['donations', 'fdx'], clients_file: issuer.config.clients_file },
    undefined,
    { behindLoopbackProxy: true },
  );
  expect(proxied.config.profile).toBe('production');
  staff = await createStaff(t.db);
  await seedData(t.db, staff, 'production', { donations: 2 });
});
afterAll(async () => {
  await proxied?.close();
  await issuer?.close();
  await t?.drop();
});

async function tokenFor(ranges: string[]) {
  const client = await issuer.registerClient({
    environment: 'production',
    redirectUris: [REDIRECT],
    scopes: ['read_only'],
    ipAllowList: ranges,
  });
  return accessToken(issuer, client, { environment: 'production', redirectUri: REDIRECT, scope: 'read_only', login: staff.users.member });
}

/** GET /v1/donations through the proxy; the answer is checked against its published operation. */
async function donations(bearer: string, headers: Headers) {
  const requestHeaders = { authorization: `Bearer ${bearer}`, ...headers };
  const res = await send(`${proxied.urls.api}/v1/donations`, { headers: requestHeaders });
  const flat = Object.fromEntries(Object.entries(requestHeaders).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));
  checkGatewayResponse({
    method: 'GET',
    path: '/v1/donations',
    requestHeaders: flat,
    status: res.status,
    contentType: res.headers['content-type'],
    text: res.body,
  });
  return res;
}

/** Each form of steering the client address: an allowed address written further left, then something else. */
const steering = (allowed: string): [string, Headers][] => [
  ['IPv4 with a port', { 'x-forwarded-for': `${allowed}, 198.51.100.9:5555` }],
  ['bracketed IPv6 with a port', { 'x-forwarded-for': `${allowed}, [2001:db8::1]:443` }],
  ['"unknown"', { 'x-forwarded-for': `${allowed}, unknown` }],
  ['garbage', { 'x-forwarded-for': `${allowed}, garbage` }],
  ['an obfuscated identifier', { 'x-forwarded-for': `${allowed}, _hidden` }],
  ['a port out of range', { 'x-forwarded-for': `${allowed}, 198.51.100.9:99999` }],
  ['a zone id', { 'x-forwarded-for': `${allowed}, fe80::1%eth0` }],
  ['a quoted bracketed IPv6', { 'x-forwarded-for': `${allowed}, "[2001:db8::1]"` }],
  ['an empty element', { 'x-forwarded-for': `${allowed},` }],
  ['a left-most spoofed address', { 'x-forwarded-for': `${allowed}, 198.51.100.9` }],
  ['a second header line', { 'x-forwarded-for': [allowed, '198.51.100.9:5555'] }],
  ['a second header line saying unknown', { 'x-forwarded-for': [allowed, 'unknown'] }],
];

describe('X-Forwarded-For steering: IP allow-lists', () => {
  let v4: string;
  let v6: string;
  beforeAll(async () => {
    v4 = await tokenFor(['203.0.113.0/24']);
    v6 = await tokenFor(['2001:db8:aa::/48']);
  });

  it('admits the caller a trusted proxy names, in every form a proxy writes', async () => {
    expect((await donations(v4, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    expect((await donations(v4, { 'x-forwarded-for': '203.0.113.7:5555' })).status).toBe(200);
    expect((await donations(v4, { 'x-forwarded-for': '198.51.100.9, 203.0.113.7, 127.0.0.1' })).status).toBe(200);
    expect((await donations(v6, { 'x-forwarded-for': '[2001:db8:aa::1]:443' })).status).toBe(200);
    expect((await donations(v6, { 'x-forwarded-for': '2001:db8:aa::1' })).status).toBe(200);
    // Several header lines are one list, in order: the last line is the nearest hop.
    expect((await donations(v4, { 'x-forwarded-for': ['198.51.100.9', '203.0.113.7'] })).status).toBe(200);
  });

  it.each(steering('203.0.113.7'))('refuses an allowed address steered in with %s (403)', async (_form, headers) => {
    const res = await donations(v4, headers);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ status: 403, detail: expect.stringMatching(/outside the CIDR ranges/) });
  });

  it('refuses an allowed IPv6 address steered in the same way', async () => {
    for (const [, headers] of steering('2001:db8:aa::1')) expect((await donations(v6, headers)).status).toBe(403);
  });

  it('does not read Forwarded (RFC 7239): the caller is the proxy itself', async () => {
    expect((await donations(v4, { forwarded: 'for=203.0.113.7' })).status).toBe(403);
    expect((await donations(v4, { forwarded: 'for=203.0.113.7', 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
  });
});

describe('X-Forwarded-For steering: /metrics', () => {
  const metrics = (headers: Headers) => send(`${proxied.urls.api}/metrics`, { headers });

  it('serves the proxy host itself (loopback, inside metrics_allow)', async () => {
    const res = await metrics({});
    expect(res.status).toBe(200);
    expect(res.body).toContain('# HELP');
  });

  it.each([
    ...steering('127.0.0.1'),
    ...steering('::1'),
    ['"unknown" alone', { 'x-forwarded-for': 'unknown' }],
    ['garbage alone', { 'x-forwarded-for': 'garbage' }],
  ] as [string, Headers][])('is a 404 for a loopback address steered in with %s', async (_form, headers) => {
    const res = await metrics(headers);
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('# HELP');
  });
});

describe('X-Forwarded-For steering: the per-address sign-in throttle', () => {
  const signInUrl = () => `${proxied.urls.dashboard}/oauth/connections/sign-in`;
  let cookie = '';
  let csrf = '';
  let attempt = 0;

  beforeAll(async () => {
    const page = await send(`${proxied.urls.dashboard}/oauth/connections`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    cookie = (page.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
  });

  /** A wrong password for an address no one has tried (so only the address limit can bite). */
  const signIn = (headers: Headers) => {
    attempt += 1;
    const body = new URLSearchParams({ csrf, email: `nobody-${attempt}@example.org`, password: 'not-a-password' }).toString();
    return send(signInUrl(), {
      method: 'POST',
      body,
      headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  };

  it('counts failures behind an unreadable hop against the nearest trusted hop, not the spoofed address', async () => {
    const statuses: number[] = [];
    // A different spoofed address every time: keyed on it, the address limit would never bite.
    for (let i = 0; i < signInFailuresPerCallerAddress.max; i += 1)
      statuses.push((await signIn({ 'x-forwarded-for': `198.51.100.${i + 1}, unknown` })).status);
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    // The lock is on the nearest trusted hop (the proxy): whatever the caller writes left of an unreadable hop.
    const locked = await signIn({ 'x-forwarded-for': '203.0.113.200, garbage' });
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toMatch(/^\d+$/);
    expect((await signIn({})).status).toBe(429);
    // The spoofed addresses themselves were never counted: each one is free, and so is a
    // caller the proxy names in a readable form (here with a port).
    expect((await signIn({ 'x-forwarded-for': '198.51.100.1' })).status).toBe(401);
    expect((await signIn({ 'x-forwarded-for': '203.0.113.200, [2001:db8::1]:443' })).status).toBe(401);
  });
});

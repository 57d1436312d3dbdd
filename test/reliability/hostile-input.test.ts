import http from 'node:http';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/gateway/api-keys/service.js';
import { ClientRegistryError, parseClientsDocument } from '../../src/oidc/clients/schema.js';
import { addOrganization } from '../../src/accounts/service.js';
import { basic } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { checkGatewayResponse, isGatewayPath } from '../helpers/published-openapi.js';

/**
 * Property-based hostile input: at least 10,000 malformed requests across the authorization,
 * token, introspection, revocation and gateway endpoints. None may answer 5xx or crash the
 * server, each endpoint answers with the statuses its rules name, and every gateway response
 * is one its published operation (or published-additions.ts) allows.
 */
const { testDatabase: t, server, staff, clients: { client } } = useOAuthServer({ clients: { client: { environment: 'production' } } });
let nonprofitKey = '';
let fundKey = '';

beforeAll(async () => {
  nonprofitKey = (await createApiKey(t.db, { org: staff.ein, environment: 'production' })).key;
  await addOrganization(t.db, { ein: '98-1010101', name: 'Fuzz Fund', kind: 'fund_provider' });
  fundKey = (await createApiKey(t.db, { org: '98-1010101', environment: 'production' })).key;
});

interface Spec {
  target: 'api' | 'dashboard';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  allowed: readonly number[];
  label: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** Sends one request; a gateway response also gets checked against its published operation. */
function send(spec: Spec): Promise<{ status: number; mismatch?: string }> {
  const base = new URL(spec.target === 'api' ? server.urls.api : server.urls.dashboard);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, method: spec.method, path: spec.path, headers: { host: base.host, ...spec.headers }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (spec.target !== 'api' || !isGatewayPath(spec.path)) return resolve({ status });
        try {
          checkGatewayResponse({ method: spec.method, path: spec.path, requestHeaders: spec.headers, status, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') });
          resolve({ status });
        } catch (error) {
          resolve({ status, mismatch: (error as Error).message });
        }
      });
    });
    req.on('error', reject);
    req.end(spec.body);
  });
}

const junk = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('', ' ', '%', '%00', '\u0000', 'null', '{}', '../..', 'a'.repeat(3000), '🙂', "' or 1=1 --"));
const enc = (s: string) => encodeURIComponent(s);
const query = fc.dictionary(fc.constantFrom('client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'prompt', 'x', 'limit', 'page_token', 'created_at.after'), junk, { maxKeys: 6 });
const qs = (q: Record<string, string>) => Object.entries(q).map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
const auth = fc.oneof(
  fc.constant({}),
  // Header values must be printable ASCII to be sendable at all.
  junk.map((j) => ({ authorization: j.replace(/[^\x20-\x7e]/g, '') })),
  junk.map((j) => ({ authorization: basic(client.client_id, j) })),
  junk.map((j) => ({ authorization: basic(j, client.client_secret) })),
  junk.map((j) => ({ authorization: `Bearer ${j.replace(/[^\x21-\x7e]/g, '')}` })),
);
const formBody = fc.dictionary(fc.constantFrom('grant_type', 'code', 'code_verifier', 'refresh_token', 'redirect_uri', 'client_id', 'client_secret', 'token', 'token_type_hint', 'scope'), junk, { maxKeys: 6 }).map(qs);
const contentType = fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', '');

const specs: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ q: query }).map(({ q }) => ({ target: 'dashboard' as const, method: 'GET', path: `/oauth/authorize?${qs(q)}`, headers: { accept: 'text/html' }, allowed: [303, 400, 404], label: 'authorize' })),
  fc.record({ a: auth, b: formBody, c: contentType }).map(({ a, b, c }) => ({ target: 'api' as const, method: 'POST', path: '/auth/oauth/token', headers: { ...a, ...(c ? { 'content-type': c } : {}) }, body: b, allowed: [400, 401, 412], label: 'token' })),
  fc.record({ a: auth, b: formBody, p: fc.constantFrom('/auth/oauth/introspect', '/auth/oauth/revoke') }).map(({ a, b, p }) => ({ target: 'api' as const, method: 'POST', path: p, headers: { ...a, 'content-type': 'application/x-www-form-urlencoded' }, body: b, allowed: [200, 400, 401], label: p })),
  fc.record({ k: fc.constantFrom(nonprofitKey, 'alm_live_xxx', ''), q: query, id: junk, p: fc.constantFrom('/v1/donations', '/v1/donations/', '/v1/grants', '/v1/grants/', '/v1/nonprofit/', '/v1/events/') }).map(({ k, q, id, p }) => ({
    target: 'api' as const,
    method: 'GET',
    path: `${p}${p.endsWith('/') ? enc(id) : ''}?${qs(q)}`,
    headers: (k ? { authorization: `Bearer ${k}`, 'api-version': fc.sample(fc.constantFrom('2026-04-01', '2026-01-15', 'nope'), 1)[0]! } : {}) as Record<string, string>,
    allowed: [200, 400, 401, 403, 404],
    label: 'gateway read',
  })),
  fc.record({ body: fc.oneof(fc.json(), junk), p: fc.constantFrom('/v1/donor_accounts', '/v1/authorization_tokens/verify', '/v1/event_subscriptions', '/v1/grant_requests/x/submit') }).map(({ body, p }) => ({
    target: 'api' as const,
    method: 'POST',
    path: p,
    headers: { authorization: `Bearer ${fundKey}`, 'content-type': 'application/json' },
    body,
    allowed: [201, 200, 400, 404, 409, 412, 413, 415, 429],
    label: 'gateway write',
  })),
);

describe('hostile input', () => {
  it('10,000 malformed requests: no 5xx, no crash, only the statuses each endpoint names, gateway answers as published', async () => {
    const all = fc.sample(specs, { numRuns: 10_000, seed: 20261122 });
    const unexpected: string[] = [];
    let index = 0;
    const worker = async () => {
      while (index < all.length) {
        const spec = all[index++]!;
        const { status, mismatch } = await send(spec);
        if (status >= 500 || !spec.allowed.includes(status)) unexpected.push(`${spec.label} ${spec.method} ${spec.path.slice(0, 120)} → ${status}`);
        else if (mismatch) unexpected.push(mismatch);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(unexpected.slice(0, 20)).toEqual([]);
    // Still serving.
    expect((await fetch(`${server.urls.api}/readyz`)).status).toBe(200);
  }, 240_000);

  it('the clients file validator rejects any malformed document with a registry error, never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json().map((j) => JSON.parse(j) as unknown), fc.record({ clients: fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 4 }) })), (doc) => {
        try {
          parseClientsDocument(doc, 'clients.json');
        } catch (error) {
          expect(error).toBeInstanceOf(ClientRegistryError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

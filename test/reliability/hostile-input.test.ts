import http from 'node:http';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { submitFromDonor } from '../../src/daf/grant-requests-service.js';
import { createMailSender } from '../../src/mail/sender.js';
import { ClientRegistryError, parseClientsDocument } from '../../src/oidc/clients/schema.js';
import { addOrganization } from '../../src/accounts/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { addProperty } from '../../src/gift-processing/properties-service.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { basic } from '../helpers/flow.js';
import { apiRequest } from '../helpers/gateway.js';
import { fdxClient, fdxToken } from '../helpers/fdx.js';
import { registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { recipientToken } from '../helpers/fdx-consent.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { checkGatewayResponse, isGatewayPath } from '../helpers/published-openapi.js';

/**
 * Property-based hostile input: at least 10,000 malformed requests across the authorization,
 * token, introspection, revocation and gateway endpoints. None may answer 5xx or crash the
 * server, each endpoint answers with the statuses its rules name, and every gateway response
 * is one its published operation (or published-additions.ts) allows. And U+0000 in the JSON
 * body of every operation that takes one: always a 400 problem from the body parser.
 */
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({ clients: { client: { environment: 'production' } } });
let nonprofitKey = '';
let fundKey = '';
/** The operations for grantmakers (the directory's: docs/directory.md, "The API") take a grantmaker's key. */
let grantmakerKey = '';
/** provisionMailbox takes a lockbox provider's key. */
let lockboxKey = '';
/** The FDX operations take access tokens only: an FDX token of the staff's organization. */
let fdxBearer = '';
/** The FDX Consent API takes a bank-data client's own DPoP-bound token, with a fresh proof per call. */
let recipient: FapiClient;
let recipientOwn = '';
/** Real ids for the path parameters of the operations that take a JSON body, so a body that got past the parser would reach the database. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  nonprofitKey = (await createApiKey(t.db, { org: staff.ein, environment: 'production' })).key;
  await addOrganization(t.db, { ein: '98-1010101', name: 'Fuzz Fund', kind: 'fund_provider' });
  fundKey = (await createApiKey(t.db, { org: '98-1010101', environment: 'production' })).key;
  await addOrganization(t.db, { ein: '98-1010102', name: 'Fuzz Grantmaker', kind: 'grantmaker' });
  grantmakerKey = (await createApiKey(t.db, { org: '98-1010102', environment: 'production' })).key;
  await addOrganization(t.db, { ein: '98-1010105', name: 'Fuzz Lockbox', kind: 'lockbox_provider' });
  lockboxKey = (await createApiKey(t.db, { org: '98-1010105', environment: 'production' })).key;
  // The nonprofit's own property, so an assignment's body that got past the parser would reach it.
  ids.properties = (
    await addProperty(t.db, {
      organizationId: staff.orgId,
      environment: 'production',
      name: 'Fuzz',
      resourceType: 'donation',
      propertyType: 'text',
      via: 'admin_cli',
    })
  ).property.id;
  // The grantmaker's own financial account, so a transfer's body that got past the parser would be created.
  const accounts = await apiRequest(server, 'production', 'GET', '/v1/financial_accounts', { bearer: grantmakerKey });
  WELL_FORMED['POST /v1/inbound_transfers'] = {
    amount: 2500,
    account_id: (accounts.body.results as { id: string }[])[0]!.id,
    description: 'quarterly funding',
  };
  // A directory organization to disburse to, so a disbursement's body that got past the parser would be created.
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '981010104', NAME: 'FUZZ RECIPIENT' })]));
  const directoryOrganization = await t.db
    .selectFrom('directory_organizations')
    .select('id')
    .where('ein', '=', '981010104')
    .executeTakeFirstOrThrow();
  WELL_FORMED['POST /v1/disbursements'] = {
    organization_id: directoryOrganization.id,
    amount: 2500,
    transactions: [{ amount: 2500, type: 'donor_advised_fund_grant', purpose: 'general support', metadata: { k: 'v' } }],
  };
  WELL_FORMED['POST /v1/disbursements/bulk'] = { disbursements: [WELL_FORMED['POST /v1/disbursements']] };
  const post = async (path: string, body: unknown) => {
    const response = await apiRequest(server, 'production', 'POST', path, { bearer: fundKey, json: body });
    return response.body as { id: string };
  };
  ids.donor_accounts = (await post('/v1/donor_accounts', { donor: { email: 'fuzz@example.org' } })).id;
  ids.event_subscriptions = (
    await post('/v1/event_subscriptions', { url: 'http://127.0.0.1:9/hook', category: 'donor_account.created' })
  ).id;
  const request = await submitFromDonor(t.db, createMailSender(server.config, t.db), server.runtime.keys, {
    fundProviderEin: '98-1010101',
    environment: 'production',
    email: 'fuzz2@example.org',
    nonprofitEin: staff.ein,
    amountCents: 100,
  });
  ids.grant_requests = request.grant_request_id;
  ids.authorization_tokens = request.authorization_token_id!;
  fdxBearer = await fdxToken(server, await fdxClient(server), staff);
  recipient = await registerFapiClient(server);
  recipientOwn = await recipientToken(recipient);
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
/**
 * Sends one request; a gateway response also gets checked against its published operation. A
 * request the server never saw, because it closed an idle kept-alive socket as the request went
 * out on it (Node's documented keep-alive race, `req.reusedSocket`), is sent once more on a new
 * socket; a server that drops a request it did read fails that second try as well.
 */
function send(spec: Spec, retried = false): Promise<{ status: number; mismatch?: string }> {
  const base = new URL(spec.target === 'api' ? server.urls.api : server.urls.dashboard);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method: spec.method, path: spec.path, headers: { host: base.host, ...spec.headers }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (spec.target !== 'api' || !isGatewayPath(spec.path)) return resolve({ status });
          try {
            checkGatewayResponse({
              method: spec.method,
              path: spec.path,
              requestHeaders: spec.headers,
              status,
              contentType: res.headers['content-type'],
              text: Buffer.concat(chunks).toString('utf8'),
            });
            resolve({ status });
          } catch (error) {
            resolve({ status, mismatch: (error as Error).message });
          }
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && error.code === 'ECONNRESET') resolve(send(spec, true));
      else reject(error);
    });
    req.end(spec.body);
  });
}

const junk = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '%', '%00', '\u0000', 'null', '{}', '../..', 'a'.repeat(3000), '🙂', "' or 1=1 --"),
);
const enc = (s: string) => encodeURIComponent(s);
const query = fc.dictionary(
  fc.constantFrom(
    'client_id',
    'redirect_uri',
    'response_type',
    'scope',
    'state',
    'nonce',
    'code_challenge',
    'code_challenge_method',
    'prompt',
    'x',
    'limit',
    'page_token',
    'created_at.after',
  ),
  junk,
  { maxKeys: 6 },
);
const qs = (q: Record<string, string>) =>
  Object.entries(q)
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .join('&');
const auth = fc.oneof(
  fc.constant({}),
  // Header values must be printable ASCII to be sendable at all.
  junk.map((j) => ({ authorization: j.replace(/[^\x20-\x7e]/g, '') })),
  junk.map((j) => ({ authorization: basic(client.client_id, j) })),
  junk.map((j) => ({ authorization: basic(j, client.client_secret) })),
  junk.map((j) => ({ authorization: `Bearer ${j.replace(/[^\x21-\x7e]/g, '')}` })),
);
const formBody = fc
  .dictionary(
    fc.constantFrom(
      'grant_type',
      'code',
      'code_verifier',
      'refresh_token',
      'redirect_uri',
      'client_id',
      'client_secret',
      'token',
      'token_type_hint',
      'scope',
    ),
    junk,
    { maxKeys: 6 },
  )
  .map(qs);
const contentType = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/json',
  'text/plain',
  'multipart/form-data; boundary=x',
  '',
);

const specs: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ q: query }).map(({ q }) => ({
    target: 'dashboard' as const,
    method: 'GET',
    path: `/oauth/authorize?${qs(q)}`,
    headers: { accept: 'text/html' },
    allowed: [303, 400, 404],
    label: 'authorize',
  })),
  fc.record({ a: auth, b: formBody, c: contentType }).map(({ a, b, c }) => ({
    target: 'api' as const,
    method: 'POST',
    path: '/auth/oauth/token',
    headers: { ...a, ...(c ? { 'content-type': c } : {}) },
    body: b,
    allowed: [400, 401, 412],
    label: 'token',
  })),
  fc.record({ a: auth, b: formBody, p: fc.constantFrom('/auth/oauth/introspect', '/auth/oauth/revoke') }).map(({ a, b, p }) => ({
    target: 'api' as const,
    method: 'POST',
    path: p,
    headers: { ...a, 'content-type': 'application/x-www-form-urlencoded' },
    body: b,
    allowed: [200, 400, 401],
    label: p,
  })),
  fc
    .record({
      k: fc.constantFrom(nonprofitKey, 'alm_live_xxx', ''),
      q: query,
      id: junk,
      p: fc.constantFrom('/v1/donations', '/v1/donations/', '/v1/grants', '/v1/grants/', '/v1/nonprofit/', '/v1/events/'),
    })
    .map(({ k, q, id, p }) => ({
      target: 'api' as const,
      method: 'GET',
      path: `${p}${p.endsWith('/') ? enc(id) : ''}?${qs(q)}`,
      headers: (k
        ? { authorization: `Bearer ${k}`, 'api-version': fc.sample(fc.constantFrom('2026-04-01', '2026-01-15', 'nope'), 1)[0]! }
        : {}) as Record<string, string>,
      allowed: [200, 400, 401, 403, 404],
      label: 'gateway read',
    })),
  fc
    .record({
      body: fc.oneof(fc.json(), junk),
      p: fc.constantFrom('/v1/donor_accounts', '/v1/authorization_tokens/verify', '/v1/event_subscriptions', '/v1/grant_requests/x/submit'),
    })
    .map(({ body, p }) => ({
      target: 'api' as const,
      method: 'POST',
      path: p,
      headers: { authorization: `Bearer ${fundKey}`, 'content-type': 'application/json' },
      body,
      allowed: [201, 200, 400, 404, 409, 412, 413, 415, 429],
      label: 'gateway write',
    })),
);

/**
 * U+0000 anywhere in a JSON body: in a key or a string value, at any depth, of a body that
 * is otherwise well formed for the operation or arbitrary JSON. JSON.stringify writes it as
 * the escape \u0000, as any client would send it.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const NUL = '\u0000';
const withNul = (text: string, at: number) => text.slice(0, at % (text.length + 1)) + NUL + text.slice(at % (text.length + 1));

function containers(value: Json, found: (Json[] | { [key: string]: Json })[] = []) {
  if (value !== null && typeof value === 'object') {
    found.push(value);
    for (const child of Array.isArray(value) ? value : Object.values(value)) containers(child, found);
  }
  return found;
}

/** Puts a NUL into `base` (a fresh copy): into an existing key or string, or as a new entry. */
function injectNul(base: Json, pick: number, where: 'key' | 'value' | 'new', at: number): Json {
  const root: Json = base !== null && typeof base === 'object' ? (JSON.parse(JSON.stringify(base)) as Json) : { value: base };
  const all = containers(root);
  const target = all[pick % all.length]!;
  if (Array.isArray(target)) {
    const strings = target.map((v, i) => (typeof v === 'string' ? i : -1)).filter((i) => i >= 0);
    if (where === 'value' && strings.length > 0)
      target[strings[at % strings.length]!] = withNul(target[strings[at % strings.length]!] as string, at);
    else target.push(withNul('v', at));
    return root;
  }
  const keys = Object.keys(target);
  if (where === 'key' && keys.length > 0) {
    const key = keys[at % keys.length]!;
    target[withNul(key, at)] = target[key]!;
    delete target[key];
  } else if (where === 'value' && keys.some((k) => typeof target[k] === 'string')) {
    const key = keys.filter((k) => typeof target[k] === 'string')[at % keys.filter((k) => typeof target[k] === 'string').length]!;
    target[key] = withNul(target[key] as string, at);
  } else {
    target[where === 'key' ? withNul('k', at) : 'k'] = where === 'key' ? 'v' : withNul('v', at);
  }
  return root;
}

/** A body each operation would otherwise accept, so that without the parser's check the NUL would reach the database. */
const WELL_FORMED: Record<string, Json> = {
  'POST /v1/donor_accounts': { donor: { email: 'nul@example.org', first_name: 'Ada' }, external_id: 'X-1', metadata: { tier: 'gold' } },
  'PATCH /v1/donor_accounts/:id': { donor: { last_name: 'Lovelace' }, metadata: { k: 'v' } },
  'POST /v1/donor_accounts/:id/authorization_tokens': { expires_in: 3600, metadata: { k: 'v' } },
  'POST /v1/authorization_tokens/verify': { code: 'ABCDEFGHJKMN', external_id: 'E-1' },
  'POST /v1/grant_requests/:id/submit': { external_grant_id: 'G-1', comment: 'sent' },
  'POST /v1/grant_requests/:id/reject': { reason: 'late' },
  'POST /v1/event_subscriptions': { url: 'http://127.0.0.1:9/hook', category: 'grant_request.created' },
  'PATCH /v1/event_subscriptions/:id': { status: 'disabled' },
  'PUT /fdx/v6/consents/:consentId/revocation': { reason: 'USER_ACTION', initiator: 'DATA_RECIPIENT' },
  'POST /v1/simulations/organizations/onboard/:id': { settlement: 'SANDBOX_SETTLEMENT_ACH' },
  'POST /v1/verification_requests': {
    ein: '981010103',
    organization_name: 'Nul Aid',
    recommended_mailing_address: { line1: '1 Elm St', city: 'Tulsa', state: 'OK', zip_code: '74103' },
  },
  'POST /v1/nonprofit_addresses': { entries: [{ ein: '981010103', line1: '1 Elm St', city: 'Tulsa', state: 'OK', zip: '74103' }] },
  'POST /v1/nonprofit_contacts': { entries: [{ ein: '981010103', email: 'nul@example.org' }] },
  // Its account id is the grantmaker's own, read in beforeAll.
  'POST /v1/inbound_transfers': { amount: 2500, account_id: 'account_', description: 'quarterly funding' },
  // Its organization is a directory organization imported in beforeAll.
  'POST /v1/disbursements': { organization_id: 'org_', amount: 2500, transactions: [{ amount: 2500, type: 'donor_advised_fund_grant' }] },
  'POST /v1/disbursements/bulk': { disbursements: [] },
  'POST /v1/disbursements/approve': { disbursement_ids: ['disbursement_'] },
  'POST /v1/disbursements/:id/stop': { reason: 'voided' },
  // DAFpay giving (docs/giving.md): a nonprofit's own calls.
  'POST /v1/connects': { organization_id: 'org_00000000000000000000000000000000', contact: { email: 'nul@example.org' }, name: 'site' },
  'POST /v1/grants': { workflowSessionId: '00000000-0000-4000-8000-000000000000', amount: 5000, note: 'thanks' },
  'POST /v1/recurring_grants': { workflowSessionId: '00000000-0000-4000-8000-000000000000', amount: 5000, frequency: 'MONTHLY' },
  // Gift processing (docs/gift-processing.md, "The API"): a nonprofit's assignment, a lockbox provider's answer.
  'POST /v1/properties/:id/assign': { value: { type: 'text', text_value: 'x' }, resources: { ids: ['donation_x'] } },
  'POST /v1/lockboxes/fulfill_request': {
    request_id: 'request-nul-0001',
    location_id: 'po_1',
    address: { line1: 'PO Box 1', city: 'Newark', state: 'NJ', postal_code: '07101', country: 'US' },
  },
  // A lockbox provider's request for a batch upload URL.
  'POST /v1/mailbox/upload_url': { location_id: 'po_1' },
};

const jsonOperations = GATEWAY_ROUTES.filter((route) => route.body !== undefined);

describe('hostile input', () => {
  it('U+0000 in the JSON body of every operation that takes one: 400 problem, never further', async () => {
    expect(jsonOperations.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort()).toEqual(Object.keys(WELL_FORMED).sort());
    const unexpected: string[] = [];
    let sent = 0;
    for (const route of jsonOperations) {
      const operation = `${route.method.toUpperCase()} ${route.path}`;
      const base = fc.oneof(fc.constant(WELL_FORMED[operation] ?? {}), fc.jsonValue() as fc.Arbitrary<Json>);
      const bodies = fc.sample(
        fc
          .tuple(base, fc.nat(), fc.constantFrom('key' as const, 'value' as const, 'new' as const), fc.nat(64))
          .map(([b, pick, where, at]) => JSON.stringify(injectNul(b, pick, where, at))),
        { numRuns: 200, seed: 20261123 },
      );
      const path = route.path
        .replace(/^\/v1\/(\w+)\/:id/, (_, resource: string) => `/v1/${resource}/${ids[resource] ?? 'x'}`)
        .replace(':consentId', 'A'.repeat(22));
      const bearer =
        route.credentials === 'access_token'
          ? fdxBearer
          : route.callers?.includes('grantmaker')
            ? grantmakerKey
            : route.callers?.includes('lockbox_provider')
              ? lockboxKey
              : route.callers?.includes('platform') || route.callers?.includes('nonprofit')
                ? nonprofitKey
                : fundKey;
      const credential = async () =>
        route.credentials === 'client'
          ? {
              headers: {
                authorization: `DPoP ${recipientOwn}`,
                dpop: await dpopProof(recipient.dpopKey, {
                  method: route.method.toUpperCase(),
                  url: `${server.urls.api}${path}`,
                  accessToken: recipientOwn,
                }),
              },
            }
          : { bearer };
      const answers = await Promise.all(
        bodies.map(async (body) => {
          expect(body).toContain('\\u0000');
          const response = await apiRequest(server, 'production', route.method.toUpperCase(), path, {
            ...(await credential()),
            rawJson: body,
          });
          return { body, status: response.status, type: response.headers.get('content-type'), detail: String(response.body.detail ?? '') };
        }),
      );
      for (const a of answers) {
        sent += 1;
        if (a.status !== 400 || !a.type?.startsWith('application/problem+json') || !a.detail.includes('U+0000'))
          unexpected.push(`${operation} ${a.body.slice(0, 100)} → ${a.status} ${a.detail}`);
      }
    }
    expect(unexpected.slice(0, 20)).toEqual([]);
    expect(sent).toBe(jsonOperations.length * 200);
  }, 120_000);

  it('10,000 malformed requests: no 5xx, no crash, only the statuses each endpoint names, gateway answers as published', async () => {
    const all = fc.sample(specs, { numRuns: 10_000, seed: 20261122 });
    const unexpected: string[] = [];
    let index = 0;
    const worker = async () => {
      while (index < all.length) {
        const spec = all[index++]!;
        const { status, mismatch } = await send(spec);
        if (status >= 500 || !spec.allowed.includes(status))
          unexpected.push(`${spec.label} ${spec.method} ${spec.path.slice(0, 120)} → ${status}`);
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
      fc.property(
        fc.oneof(
          fc.json().map((j) => JSON.parse(j) as unknown),
          fc.record({ clients: fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 4 }) }),
        ),
        (doc) => {
          try {
            parseClientsDocument(doc, 'clients.json');
          } catch (error) {
            expect(error).toBeInstanceOf(ClientRegistryError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

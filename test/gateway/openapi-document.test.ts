import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { buildOpenApiDocument } from '../../src/gateway/openapi.js';
import type { RouteSpec } from '../../src/gateway/routing/route-spec.js';
import { API_VERSIONS } from '../../src/gateway/routing/versions.js';
import { API_REFERENCE_POLICY } from '../../src/http/security-headers.js';
import { endpoints } from '../helpers/flow.js';
import { apiGet } from '../helpers/gateway.js';
import { checkServedResponse, type ServedDocument, type ServedExchange } from '../helpers/served-openapi.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Our /openapi.json: valid, served per host and Api-Version, and saying what every route does. */
const { server } = useOAuthServer();

type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
};
type Document = ServedDocument & {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; openIdConnectUrl?: string }> };
};

async function served(environment: 'production' | 'sandbox', version: string): Promise<Document> {
  const res = await apiGet(server, environment, '/openapi.json', { headers: { 'api-version': version } });
  expect(res.status).toBe(200);
  expect(res.headers.get('api-version')).toBe(version);
  return res.body as unknown as Document;
}

const operationOf = (doc: Document, spec: RouteSpec) => doc.paths[spec.path.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[spec.method];
const verdict = (doc: ServedDocument, exchange: Partial<ServedExchange> & Pick<ServedExchange, 'path' | 'status' | 'text'>) => {
  try {
    checkServedResponse(
      { method: 'GET', contentType: exchange.status >= 400 ? 'application/problem+json' : 'application/json', ...exchange },
      doc,
    );
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};
const problem = (status: number) => JSON.stringify({ type: 'about:blank', title: 'x', status, detail: 'x' });

describe('/openapi.json', () => {
  it('passes @redocly/openapi-core lint (recommended rules) with no error, in every version', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    for (const version of API_VERSIONS) {
      const doc = await served('production', version);
      const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `openapi-${version}.json`, config });
      const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location[0]?.pointer ?? ''}`);
      expect(
        found.filter((p) => p.startsWith('error')),
        version,
      ).toEqual([]);
      // The one warning left: the API has no licence to name.
      expect(found, version).toEqual(['warn info-license: Info object should contain `license` field. #/info']);
    }
  });

  it('is served per API host (its own server URL and discovery) and per Api-Version', async () => {
    for (const environment of ['production', 'sandbox'] as const) {
      const origin = endpoints(server, environment).api;
      for (const version of API_VERSIONS) {
        const doc = await served(environment, version);
        expect(doc.info.version).toBe(version);
        expect(doc.servers).toEqual([{ url: origin }]);
        expect(doc.components.securitySchemes.accessToken).toMatchObject({
          type: 'openIdConnect',
          openIdConnectUrl: `${origin}/.well-known/openid-configuration`,
        });
        expect(doc).toEqual(buildOpenApiDocument(GATEWAY_ROUTES, version, origin));
      }
    }
    // The donor-advised-fund operations arrived in 2026-04-01.
    expect(Object.keys((await served('production', '2026-01-15')).paths)).not.toContain('/v1/donor_accounts');
    expect(Object.keys((await served('production', '2026-04-01')).paths)).toContain('/v1/donor_accounts');
  });

  it('declares each route: its request body, success status, every status it can answer, and its credentials', async () => {
    const doc = await served('production', '2026-04-01');
    for (const spec of GATEWAY_ROUTES.filter((s) => s.versions.includes('2026-04-01'))) {
      const op = operationOf(doc, spec)!;
      const name = `${spec.method.toUpperCase()} ${spec.path}`;
      expect(op.operationId, name).toBe(spec.operationId);
      expect(Object.keys(op.requestBody?.content ?? {}), name).toEqual(spec.body ? ['application/json'] : []);
      const statuses = Object.keys(op.responses).map(Number);
      expect(
        statuses.filter((s) => s < 300),
        name,
        // A creation that answers 200 with what already existed (a Connect, a captured grant) declares both.
      ).toEqual(spec.answersExisting ? [200, spec.status] : [spec.status ?? 200]);
      // The router stack's own answers, and the handler's.
      expect(statuses, name).toEqual(expect.arrayContaining([401, 403, 500, 503, ...spec.errors]));
      if (spec.body) expect(statuses, name).toEqual(expect.arrayContaining([400, 413, 415]));
      if (!spec.pathVersioned) expect(statuses, name).toContain(400);
      const listed = op.security.flatMap((requirement) => Object.keys(requirement));
      expect(listed.length, `${name}: each scheme once`).toBe(new Set(listed).size);
      const schemes = [...listed].sort();
      // Fund-provider operations take both kinds too (of a fund provider: the router's requireCallerKind).
      // The Consent API takes the data recipient's own client-credentials token.
      const expected =
        spec.credentials === 'client' ? ['clientToken'] : spec.credentials === 'access_token' ? ['accessToken'] : ['accessToken', 'apiKey'];
      expect(schemes, name).toEqual(expected);
    }
    const create = doc.paths['/v1/event_subscriptions']!.post!;
    expect(Object.keys(create.responses)).not.toContain('200');
    expect(create.responses['201']!.headers).toHaveProperty('Location');
    // One requirement per scheme (a reader shows them joined by "or"): the scopes every token
    // needs; the alternatives (read_only or read_write) are in the description and x-required-scope.
    expect(doc.paths['/v1/donations']!.get!.security).toEqual([{ accessToken: [] }, { apiKey: [] }]);
    expect(doc.paths['/fdx/v6/accounts']!.get!.security).toEqual([{ accessToken: ['read_only'] }]);
    expect(doc.paths['/v1/grant_requests/{id}/submit']!.post!.security).toEqual([{ accessToken: ['read_write'] }, { apiKey: [] }]);
    expect(doc.paths['/openapi.json']!.get!.security).toEqual([]);
  });

  it('fails a response whose status, body or credential the served document does not declare', async () => {
    const doc = await served('production', '2026-04-01');
    const post = { method: 'POST', path: '/v1/event_subscriptions', requestHeaders: { authorization: 'Bearer alm_test_x' } };
    const subscription = JSON.stringify({
      id: 'evtsub_1',
      created_at: '2026-01-01T00:00:00Z',
      status: 'active',
      url: 'https://example.org/hook',
      category: 'grant.created',
    });
    expect(verdict(doc, { ...post, status: 201, text: subscription })).toBeUndefined();
    expect(verdict(doc, { ...post, status: 200, text: subscription })).toMatch(
      /documents no 200 response for POST \/v1\/event_subscriptions/,
    );
    expect(verdict(doc, { ...post, status: 201, text: JSON.stringify({ id: 'evtsub_1' }) })).toMatch(
      /does not match our \/openapi.json \(2026-04-01\) POST \/v1\/event_subscriptions 201/,
    );
    expect(verdict(doc, { ...post, status: 404, text: problem(404) })).toMatch(/documents no 404 response/);
    expect(verdict(doc, { ...post, status: 400, contentType: 'application/json', text: problem(400) })).toMatch(
      /documents application\/problem\+json/,
    );
    // A success with a credential the operation does not list (an API key on FDX, which takes access tokens only).
    expect(
      verdict(doc, { ...post, requestHeaders: { authorization: 'Bearer some.access.token' }, status: 201, text: subscription }),
    ).toBeUndefined();
    expect(
      verdict(doc, { path: '/fdx/v6/customers/current', requestHeaders: { authorization: 'Bearer alm_live_x' }, status: 200, text: '{}' }),
    ).toMatch(/succeeded with an API key/);
    // A method or path the document lacks: only the generic problems.
    expect(verdict(doc, { path: '/v1/nowhere', status: 404, text: problem(404) })).toBeUndefined();
    expect(verdict(doc, { path: '/v1/nowhere', status: 200, text: '{}' })).toMatch(/has no GET \/v1\/nowhere/);
    // The check follows the specs: a handler error the spec does not declare is not in the document.
    const conflict = { method: 'POST', path: '/v1/donor_accounts', status: 409, text: problem(409) };
    expect(verdict(doc, conflict)).toBeUndefined();
    // (Without its Idempotency-Key too, which answers 409 of its own.)
    const narrowed = GATEWAY_ROUTES.map((s) =>
      s.method === 'post' && s.path === '/v1/donor_accounts'
        ? { ...s, idempotent: undefined, errors: s.errors.filter((e) => e !== 409) }
        : s,
    );
    expect(verdict(buildOpenApiDocument(narrowed, '2026-04-01', 'http://x') as unknown as ServedDocument, conflict)).toMatch(
      /documents no 409 response for POST \/v1\/donor_accounts/,
    );
  });
});

describe('API reference on the dashboard hosts', () => {
  it('serves the API host document of its environment per version, under the reference page CSP only', async () => {
    for (const environment of ['production', 'sandbox'] as const) {
      const dashboard = endpoints(server, environment).dashboard;
      for (const version of API_VERSIONS) {
        const res = await fetch(`${dashboard}/docs/api/openapi.json?version=${version}`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(await served(environment, version));
      }
      const page = await fetch(`${dashboard}/docs/api`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(API_REFERENCE_POLICY);
      expect(await page.text()).toContain('data-spec="/docs/api/openapi.json?version=2026-04-01"');
      const bundle = await fetch(`${dashboard}/docs/api/redoc.standalone.js`);
      expect(bundle.headers.get('content-type')).toMatch(/^application\/javascript/);
      expect(await bundle.text()).not.toContain('cdn.redoc.ly');
      // Everything else keeps the default policy: no scripts, no styles.
      for (const other of ['/', '/docs/api/openapi.json', '/docs/api/redoc.standalone.js']) {
        expect((await fetch(`${dashboard}${other}`)).headers.get('content-security-policy'), other).toMatch(
          /^default-src 'none'; frame-ancestors 'none'/,
        );
      }
      expect((await fetch(`${dashboard}/docs/api?version=2025-01-01`)).status).toBe(404);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { DEMO_PAYMENT_STATUSES } from '../../src/demo/nonprofit-data.js';
import { ADDED_STATUSES, BORROWED_OPERATIONS, OWN_OPERATIONS } from '../helpers/published-additions.js';
import {
  checkGatewayResponse,
  isGatewayPath,
  matchTemplate,
  PUBLISHED_DOCUMENTS,
  readDocument,
  validatePublished,
  type GatewayExchange,
  type PublishedDocument,
} from '../helpers/published-openapi.js';

// Complete as the product sends it: checkGatewayResponse also holds it to our own /openapi.json.
const donation = {
  id: 'donation_1',
  external_id: '1',
  payment_source_id: 'ps',
  amount_gross: 100,
  amount_net: 90,
  amount_fee: 10,
  currency: 'USD',
  purpose: 'x',
  note: '',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  canceled_at: null,
  payment_status: 'RECEIVED_IN_CHARIOT',
  // Always sent, empty when the donation has no property values.
  properties: [],
};
const problem = (status: number, title = 'Error') => JSON.stringify({ type: 'about:blank', title, status, detail: 'x' });
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM = 'application/problem+json; charset=utf-8';

/** checkGatewayResponse's verdict: undefined when accepted, else its message. */
function verdict(exchange: Partial<GatewayExchange> & Pick<GatewayExchange, 'path' | 'status' | 'text'>): string | undefined {
  try {
    checkGatewayResponse({ method: 'GET', contentType: exchange.status >= 400 ? PROBLEM : JSON_TYPE, ...exchange });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the demo data', () => {
  it("gives donations only payment statuses the published documents' enum allows, every one of them valid", () => {
    for (const payment_status of new Set(DEMO_PAYMENT_STATUSES))
      for (const version of ['2026-04-01', '2026-01-15'] as const) {
        const { external_id: _added, ...older } = donation;
        const body = { results: [{ ...(version === '2026-04-01' ? donation : older), payment_status }] };
        expect(validatePublished(version, '/v1/donations', 'get', 200, body), `${version} ${payment_status}`).toEqual([]);
      }
    // The enum is closed: a status of the product's own choosing would be refused.
    expect(
      validatePublished('2026-04-01', '/v1/donations', 'get', 200, { results: [{ ...donation, payment_status: 'INCOMING' }] }),
    ).not.toEqual([]);
  });
});

describe('published schema validator', () => {
  it('accepts a conforming donation list and rejects a broken one', () => {
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 200, { results: [donation] })).toEqual([]);
    const bad = { results: [{ id: 'donation_1', amount_gross: '100' }] };
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 200, bad).length).toBeGreaterThan(0);
    expect(
      validatePublished('2026-04-01', '/v1/donations', 'get', 401, {
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: 'x',
      }),
    ).toEqual([]);
    expect(
      validatePublished('2026-04-01', '/v1/donations', 'get', 401, { type: 'about:blank', title: 'Unauthorized', status: 401 }),
    ).not.toEqual([]);
  });

  it('matches concrete paths to templates, literal segments first, FDX relative to its server path', () => {
    expect(matchTemplate('2026-04-01', 'get', '/v1/donations/donation_1')).toBe('/v1/donations/{id}');
    expect(matchTemplate('2026-04-01', 'post', '/v1/authorization_tokens/verify')).toBe('/v1/authorization_tokens/verify');
    expect(matchTemplate('2026-04-01', 'get', '/v1/authorization_tokens/verify')).toBe('/v1/authorization_tokens/{id}');
    expect(matchTemplate('2026-04-01', 'get', '/v1/donations/')).toBeUndefined();
    expect(matchTemplate('fdx-v6', 'get', '/accounts/a1/statements/s1')).toBe('/accounts/{id}/statements/{statementId}');
    expect(isGatewayPath('/v1/grants?pageLimit=1')).toBe(true);
    expect(isGatewayPath('/fdx/v6/accounts')).toBe(true);
    expect(isGatewayPath('/openapi.json')).toBe(true);
    expect(isGatewayPath('/auth/oauth/token')).toBe(false);
  });
});

describe('checkGatewayResponse', () => {
  it('accepts a documented response and names operation, status, schema errors and body start when it does not match', () => {
    expect(verdict({ path: '/v1/donations?limit=1', status: 200, text: JSON.stringify({ results: [donation] }) })).toBeUndefined();
    const message = verdict({
      path: '/v1/donations?limit=1',
      status: 200,
      text: JSON.stringify({ results: [{ ...donation, amount_gross: '100' }] }),
    });
    expect(message).toMatch(/^GET \/v1\/donations\?limit=1 → 200 application\/json: does not match 2026-04-01 GET \/v1\/donations 200/);
    expect(message).toMatch(/\/results\/0\/amount_gross must be integer/);
    expect(message).toMatch(/body: "\{\\"results\\"/);
  });

  it('chooses the document by Api-Version, the default when absent', () => {
    const accounts = { path: '/v1/donor_accounts', status: 200, text: JSON.stringify({ results: [] }) };
    // The donor-advised-fund operations exist from 2026-04-01 only.
    expect(verdict({ ...accounts, requestHeaders: { 'Api-Version': '2026-01-15' } })).toMatch(
      /2026-01-15 has no GET \/v1\/donor_accounts, so only 404 is expected/,
    );
    expect(verdict({ ...accounts, status: 404, text: problem(404), requestHeaders: { 'api-version': '2026-01-15' } })).toBeUndefined();
    expect(verdict({ ...accounts, text: JSON.stringify({ results: 'none' }) })).toMatch(
      /does not match 2026-04-01 GET \/v1\/donor_accounts 200/,
    );
  });

  it('accepts an unknown Api-Version only as a 400 problem', () => {
    const headers = { 'api-version': '2025-01-01' };
    expect(verdict({ path: '/v1/grants', status: 400, text: problem(400), requestHeaders: headers })).toBeUndefined();
    expect(verdict({ path: '/v1/grants', status: 200, text: '{}', requestHeaders: headers })).toMatch(
      /Api-Version "2025-01-01" is unknown/,
    );
  });

  it('refuses a status the operation does not document unless published-additions.ts lists it', () => {
    expect(verdict({ path: '/v1/grants', status: 404, text: problem(404) })).toMatch(
      /2026-04-01 GET \/v1\/grants documents no 404 response, and published-additions.ts lists none/,
    );
    expect(verdict({ path: '/v1/grants', status: 503, text: problem(503) })).toBeUndefined();
    expect(verdict({ method: 'POST', path: '/v1/authorization_tokens/verify', status: 429, text: problem(429) })).toBeUndefined();
    expect(verdict({ method: 'POST', path: '/v1/donor_accounts', status: 429, text: problem(429) })).toMatch(/documents no 429/);
    // An added status is still a problem document, whose status member is the response's.
    expect(verdict({ path: '/v1/grants', status: 503, text: problem(500) })).toMatch(/status member is not 503/);
    expect(verdict({ path: '/v1/grants', status: 503, contentType: 'text/plain', text: 'down' })).toMatch(
      /must be an application\/problem\+json/,
    );
  });

  it('takes unknown paths as the generic 404 only', () => {
    expect(verdict({ path: '/v1/nowhere', status: 404, text: problem(404) })).toBeUndefined();
    expect(verdict({ path: '/v1/nowhere', status: 200, text: '{}' })).toMatch(/has no GET \/v1\/nowhere/);
  });

  it('checks FDX paths against fdx-v6 whatever the Api-Version, and files by their media type', () => {
    const statement = '/fdx/v6/accounts/a1/statements/s1';
    expect(
      verdict({
        path: statement,
        status: 200,
        contentType: 'application/pdf',
        text: undefined,
        requestHeaders: { 'api-version': 'nonsense' },
      }),
    ).toBeUndefined();
    expect(verdict({ path: statement, status: 200, contentType: 'image/png', text: undefined })).toMatch(
      /fdx-v6 GET \/accounts\/\{id\}\/statements\/\{statementId\} 200 documents application\/pdf, text\/csv, application\/vnd.bai2/,
    );
    expect(verdict({ path: statement, status: 406, text: problem(406) })).toBeUndefined();
    // /accounts/{id} documents no 400.
    expect(verdict({ path: '/fdx/v6/accounts/a1', status: 400, text: problem(400) })).toMatch(
      /fdx-v6 GET \/accounts\/\{id\} documents no 400/,
    );
  });

  it('checks the borrowed nonprofit lookup against 2023-01-01 under every version, and /openapi.json against its own schema', () => {
    const wrongShape = verdict({
      path: '/v1/nonprofit/123456789',
      status: 200,
      text: JSON.stringify({ id: 5 }),
      requestHeaders: { 'api-version': '2026-01-15' },
    });
    expect(wrongShape).toMatch(/does not match 2023-01-01 GET \/v1\/nonprofit\/\{ein\} 200/);
    expect(
      verdict({ path: '/openapi.json', status: 200, text: JSON.stringify({ openapi: '3.1.0', info: {}, paths: {} }) }),
    ).toBeUndefined();
    expect(verdict({ path: '/openapi.json', status: 200, text: JSON.stringify({ openapi: '3.0.0', info: {}, paths: {} }) })).toMatch(
      /does not match the schema of \/openapi.json/,
    );
  });
});

describe('published-additions.ts', () => {
  it('names operations that exist, statuses their documents lack, and own paths no document has', () => {
    for (const borrowed of BORROWED_OPERATIONS)
      expect(readDocument(borrowed.document).paths[borrowed.path]?.[borrowed.method], borrowed.path).toBeDefined();
    for (const added of ADDED_STATUSES) {
      expect(added.reason).not.toBe('');
      if (added.operations === 'every') continue;
      for (const name of added.operations) {
        const [document, method, template] = name.split(' ') as [PublishedDocument, string, string];
        const operation = readDocument(document).paths[template]?.[method.toLowerCase()];
        expect(operation, name).toBeDefined();
        expect(operation!.responses?.[String(added.status)], `${name} documents ${added.status} already`).toBeUndefined();
      }
    }
    for (const own of OWN_OPERATIONS)
      for (const document of PUBLISHED_DOCUMENTS) expect(readDocument(document).paths[own.path], own.path).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { buildApiReferenceRouter } from '../../src/apps/api-reference.js';
import { buildDashboardRouter } from '../../src/dashboard/routes.js';
import type { DashboardDeps } from '../../src/dashboard/deps.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { serializeError } from '../../src/logging/error-serializer.js';
import { redactPath, redactText, redactUrl } from '../../src/logging/redaction.js';
import { buildInteractionRouter, type InteractionDeps } from '../../src/oidc/interactions/routes.js';
import { API_ROUTES, authorizationPath } from '../../src/oidc/routes.js';
import { captureLogs } from '../helpers/log-capture.js';

/** What a log line may say of an address (docs/security.md, "Secrets in logs"). */

const TOKEN = 'dz-8gy58JYVOsiEPoArCU0Rx557E2cVvIFwowrNSvGs';
// An API key's shape (src/api-keys/format.ts), made up: built from parts so no key-looking literal sits in the tree.
const KEY = ['alm', 'live', 'mq9SpFK70x4W1ML4QPxi2O507z7sw6zN'].join('_');
const SIGNING = 'whsec_q3XJ+u/4b9mN2QYw7c0TzK1s5Vd8eR6hLpAaFgHjIkM=';

describe('redactPath', () => {
  it("hides an invitation or reset link's token and keeps the page", () => {
    expect(redactPath(`/invitations/${TOKEN}`)).toBe('/invitations/[redacted]');
    expect(redactPath(`/invitations/${TOKEN}/accept`)).toBe('/invitations/[redacted]/accept');
    expect(redactPath(`/reset-password/${TOKEN}`)).toBe('/reset-password/[redacted]');
    expect(redactPath('/invitations')).toBe('/invitations');
  });

  it('however the path is spelt: any case, a trailing or doubled slash, escaped letters or slashes, a malformed escape', () => {
    for (const spelt of [
      `/INVITATIONS/${TOKEN}`,
      `/invitations/${TOKEN}/`,
      `//invitations//${TOKEN}`,
      `/%69nvitations/${TOKEN}`,
      `/invitations%2F${TOKEN}`,
      `/Reset-Password/${TOKEN}%ZZ`,
      `/reset-password/${encodeURIComponent(TOKEN)}`,
    ]) {
      const logged = redactPath(spelt);
      expect(logged, spelt).not.toContain(TOKEN.slice(0, 12));
      expect(logged, spelt).toMatch(/^\/(invitations|reset-password)\/\[redacted\]$/);
    }
  });

  it("hides a Consent API path's consent id, however the path is spelt, and keeps the page", () => {
    for (const spelt of [
      `/fdx/v6/consents/${TOKEN}`,
      `/FDX/V6/consents/${TOKEN}`,
      `//fdx/v6//consents/${TOKEN}`,
      `/fdx/v6/consents%2F${TOKEN}`,
    ]) {
      expect(redactPath(spelt), spelt).toBe('/fdx/v6/consents/[redacted]');
    }
    expect(redactPath(`/fdx/v6/consents/${TOKEN}/revocation`)).toBe('/fdx/v6/consents/[redacted]/revocation');
    expect(redactUrl(`https://api.example.org/fdx/v6/consents/${TOKEN}?x=1`)).toBe(
      'https://api.example.org/fdx/v6/consents/[redacted]?[redacted]',
    );
    expect(redactText(`GET /fdx/v6/consents/${TOKEN}/revocation failed`)).toBe('GET /fdx/v6/consents/[redacted]/revocation failed');
    expect(redactPath('/fdx/v6/accounts/acc_1')).toBe('/fdx/v6/accounts/acc_1');
  });

  it('hides API keys and signing secrets wherever they are, and leaves every other path as it was', () => {
    expect(redactPath(`/v1/donations/${KEY}`)).toBe('/v1/donations/[redacted]');
    expect(redactPath(`/v1/x/${SIGNING}`)).not.toContain('q3XJ');
    for (const path of [
      '/v1/donations/don_01hzx',
      '/oauth/interaction/u_XOb6YCLIrlVYljb5Qdxt3LkrIj_GBoX3oxh_4qqsv/login',
      '/orgs/12-3456789/members/invitations/revoke',
      '/account/security',
      '/',
      '',
    ]) {
      expect(redactPath(path)).toBe(path);
    }
  });
});

describe('every route of every host', () => {
  /** Path parameters that name things (organizations, users, resources, an interaction bound to its signed cookie), and the one that is a secret. */
  // `key` is an API key's id (key_…), never the key itself.
  // deposit, item, image: a nonprofit's deposit, mail item and scan image on its dashboard pages.
  const IDENTIFIERS = new Set(['id', 'ein', 'user', 'uid', 'statementId', 'key', 'grant', 'deposit', 'item', 'image']);
  // A consent id is the handle the Consent API reads and revokes a consent by.
  const SECRETS = new Set(['token', 'consentId']);

  const templates = [
    ...buildDashboardRouter({} as DashboardDeps).stack.map((layer) => layer.path),
    ...buildInteractionRouter({} as InteractionDeps).stack.map((layer) => layer.path),
    ...buildApiReferenceRouter('production', 'https://api.example.org').stack.map((layer) => layer.path),
    ...GATEWAY_ROUTES.map((route) => route.path),
    ...Object.values(API_ROUTES),
    ...(['production', 'sandbox'] as const).flatMap((environment) => [
      authorizationPath(environment),
      `${authorizationPath(environment)}/:uid`,
    ]),
  ].filter((path): path is string => typeof path === 'string');

  it('a secret parameter is redacted in the log line, an identifier is kept; a new parameter needs a decision', () => {
    expect(templates.length).toBeGreaterThan(60);
    const secretRoutes: string[] = [];
    for (const template of templates) {
      const values: Record<string, string> = {};
      const sample = template.replace(/:(\w+)/g, (_match, name: string) => (values[name] = `${name}Value${TOKEN}`));
      for (const name of Object.keys(values)) {
        expect(
          IDENTIFIERS.has(name) || SECRETS.has(name),
          `${template}: is :${name} a secret? Say so in src/logging/redaction.ts (SECRET_AFTER) and here`,
        ).toBe(true);
      }
      const logged = redactPath(sample);
      const secrets = Object.keys(values).filter((name) => SECRETS.has(name));
      if (secrets.length > 0) secretRoutes.push(template);
      for (const name of secrets) expect(logged, template).not.toContain(values[name]);
      if (secrets.length === 0) expect(logged, template).toBe(sample);
    }
    expect(secretRoutes.sort()).toEqual([
      '/fdx/v6/consents/:consentId',
      '/fdx/v6/consents/:consentId/revocation',
      '/fdx/v6/consents/:consentId/revocation',
      '/invitations/:token',
      '/invitations/:token',
      '/invitations/:token/accept',
      '/reset-password/:token',
      '/reset-password/:token',
    ]);
  });
});

describe('redactUrl and redactText', () => {
  it('a URL keeps its origin and page; its query and fragment are replaced', () => {
    expect(redactUrl(`https://dash.example.org/reset-password/${TOKEN}`)).toBe('https://dash.example.org/reset-password/[redacted]');
    expect(redactUrl('https://app.example.org/callback?code=abc&state=xyz#frag')).toBe(
      'https://app.example.org/callback?[redacted]#[redacted]',
    );
    expect(redactUrl('https://dash.example.org/account')).toBe('https://dash.example.org/account');
    expect(redactUrl(`http://[bad/invitations/${TOKEN}?x=1`)).toBe('http://[bad/invitations/[redacted]?[redacted]');
  });

  it('text: URLs, paths with queries, secret paths and credentials inside a sentence; other text unchanged', () => {
    const text = `fetch https://hooks.example/in?key=sekrit failed; GET /v1/donations?page_token=abc then /invitations/${TOKEN} (key ${KEY}, "/reset-password/${TOKEN}")`;
    const logged = redactText(text);
    for (const secret of ['sekrit', 'page_token=abc', TOKEN, KEY]) expect(logged).not.toContain(secret);
    expect(logged).toBe(
      'fetch https://hooks.example/in?[redacted] failed; GET /v1/donations?[redacted] then /invitations/[redacted] (key [redacted], "/reset-password/[redacted]")',
    );
    const stack = 'Error: boom\n    at run (/work/src/http/x.ts:10:5)\n    at file:///work/src/y.js:1:2';
    expect(redactText(stack)).toBe(stack);
    for (const plain of ['clients file applied as registry revision 3', '2001:db8::/32 is not public', 'a/b and c'])
      expect(redactText(plain)).toBe(plain);
  });
});

describe("the logger's last pass", () => {
  it('every line: its message, its string fields at any usual depth and its error lose queries, secret paths and credentials', () => {
    const { chunks, records, logger } = captureLogs('trace');
    logger
      .child({ req_id: 'r1' })
      .debug(
        { reason: `GET /invitations/${TOKEN}`, nested: { urls: [`https://x.example/cb?code=${TOKEN}`] }, count: 2 },
        `opened https://dash.example/reset-password/${TOKEN}`,
      );
    logger.warn(
      { task: 'mail', error: { name: 'Error', message: `sending to https://x.example/in?token=${TOKEN}` } },
      'background task failed',
    );
    logger.error({ err: new Error(`request to https://x.example/a?secret=${TOKEN} failed with ${KEY}`) }, 'unhandled error');
    logger.info('start failed: %s', `https://x.example/?t=${TOKEN}`);
    const text = chunks.join('');
    expect(records()).toHaveLength(4);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(KEY);
    expect(records()[0]).toMatchObject({
      req_id: 'r1',
      reason: 'GET /invitations/[redacted]',
      nested: { urls: ['https://x.example/cb?[redacted]'] },
      count: 2,
      msg: 'opened https://dash.example/reset-password/[redacted]',
    });
    expect((records()[2]!.err as { message: string }).message).toBe('request to https://x.example/a?[redacted] failed with [redacted]');
  });

  it('the error serializer redacts the message, the stack and the causes', () => {
    const error = new Error(`GET /reset-password/${TOKEN}`, { cause: new Error(`https://x.example/?code=${TOKEN}`) });
    const out = JSON.stringify(serializeError(error));
    expect(out).not.toContain(TOKEN);
    expect(out).toContain('/reset-password/[redacted]');
    expect(serializeError(`thrown text /invitations/${TOKEN}`).message).toBe("'thrown text /invitations/[redacted]'");
  });
});

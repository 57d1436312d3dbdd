import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { OrganizationKind } from '../../src/db/schema.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { DEFAULT_CALLERS } from '../../src/gateway/auth/require-caller-kind.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Each organization kind calls its own operations only (docs/api.md, "Organization kinds"): an
 * operation that names its kinds refuses every other with 403, and one that names none serves
 * nonprofits and fund providers, never a grantmaker, a giving platform or a lockbox provider.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const LATER_KINDS: readonly OrganizationKind[] = ['grantmaker', 'platform', 'lockbox_provider'];
const keys = new Map<OrganizationKind, string>();

beforeAll(async () => {
  const kinds: OrganizationKind[] = ['nonprofit', 'fund_provider', ...LATER_KINDS];
  await Promise.all(
    kinds.map(async (kind, i) => {
      const ein = `55-00000${String(i).padStart(2, '0')}`;
      await addOrganization(t.db, { ein, name: `Kinds ${kind}`, kind });
      keys.set(kind, (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key);
    }),
  );
});

/** Every operation an API key may call (the FDX API takes access tokens only), with made-up ids. */
const apiKeyOperations = GATEWAY_ROUTES.filter((spec) => spec.credentials === 'any').map((spec) => ({
  name: `${spec.method.toUpperCase()} ${spec.path}`,
  method: spec.method.toUpperCase(),
  path: spec.path.replace(/:(\w+)/g, 'x_$1'),
  kinds: spec.callers ?? DEFAULT_CALLERS,
}));

describe('organization kinds at the gateway', () => {
  it('a grantmaker, a giving platform or a lockbox provider is refused (403) by every operation not named for it', async () => {
    expect(apiKeyOperations.length).toBeGreaterThan(10);
    for (const kind of LATER_KINDS) {
      const answers = await Promise.all(
        apiKeyOperations
          .filter((operation) => !operation.kinds.includes(kind))
          .map(async (operation) => {
            const res = await apiRequest(server, 'sandbox', operation.method, operation.path, {
              bearer: keys.get(kind),
              json: operation.method === 'GET' || operation.method === 'DELETE' ? undefined : {},
            });
            return { operation: operation.name, status: res.status, code: res.body.code, detail: String(res.body.detail) };
          }),
      );
      for (const answer of answers) {
        expect(answer, `${kind}: ${answer.operation}`).toMatchObject({ status: 403, code: 'forbidden' });
        expect(answer.detail).toMatch(
          /^These operations are for .+: call with an API key of one, or an access token of an authorization for one\.$/,
        );
      }
    }
  });

  it('nonprofits and fund providers keep the operations they had: a nonprofit lists its donations, a fund provider its donor accounts', async () => {
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations', { bearer: keys.get('nonprofit') })).status).toBe(200);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donor_accounts', { bearer: keys.get('fund_provider') })).status).toBe(200);
    const refused = await apiRequest(server, 'sandbox', 'GET', '/v1/donor_accounts', { bearer: keys.get('nonprofit') });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe(
      'These operations are for donor-advised-fund providers: call with an API key of one, or an access token of an authorization for one.',
    );
  });

  it('a grantmaker calls the operations named for it: its financial accounts and programs', async () => {
    for (const path of ['/v1/financial_accounts', '/v1/programs']) {
      expect((await apiRequest(server, 'sandbox', 'GET', path, { bearer: keys.get('grantmaker') })).status).toBe(200);
    }
    // A platform reads its processing account (docs/giving.md, "Money"), never a grantmaker's programs.
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/financial_accounts', { bearer: keys.get('platform') })).status).toBe(200);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/programs', { bearer: keys.get('platform') })).status).toBe(403);
  });
});

import { describe, expect, it } from 'vitest';
import { endpoints, basic } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { clientSecretFailuresPerCallerAddress } from '../../src/limits/rate-limits.js';

const {
  server,
  clients: { client },
} = useOAuthServer({ staff: 0, clients: { client: { environment: 'production' } } });

function introspect(secret: string) {
  return fetch(`${endpoints(server, 'production').api}/auth/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, secret) },
    body: new URLSearchParams({ token: 'x'.repeat(43) }),
  });
}

function tokenWithSecret(secret: string) {
  return fetch(`${endpoints(server, 'production').api}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, secret) },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(43) }),
  });
}

describe('a flood of wrong client secrets', () => {
  it('is refused without running argon2 past the limit, is never cached as success, and leaves the good secret working', async () => {
    const cache = server.runtime.oidc.secretCache;
    // Warm the cache with the correct secret, as a busy legitimate client would have.
    expect((await introspect(client.client_secret)).status).toBe(200);
    const before = cache.argon2Runs;
    const wrong = Array.from({ length: 1000 }, (_, i) => tokenWithSecret(`wrong-${i}`).then((r) => r.status));
    const good = Array.from({ length: 50 }, () => introspect(client.client_secret).then((r) => r.status));
    const [wrongStatuses, goodStatuses] = await Promise.all([Promise.all(wrong), Promise.all(good)]);
    expect(new Set(wrongStatuses)).toEqual(new Set([401]));
    expect(new Set(goodStatuses)).toEqual(new Set([200]));
    // argon2 ran only until the limit was reached.
    expect(cache.argon2Runs - before).toBe(clientSecretFailuresPerCallerAddress.max);
    // A wrong secret never became a success, even one that was tried many times.
    expect((await tokenWithSecret('wrong-1')).status).toBe(401);
  });
});

import crypto from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { hashClientSecret } from '../../src/oidc/clients/service.js';
import type { Keygrip } from '../../src/oidc/cookie-keys.js';
import { OIDC_PROVIDER_RANGE } from '../../src/oidc/provider-internals.js';
import { createProvider } from '../../src/oidc/provider.js';
import { CLIENT_REQUEST, runInUnit, UnitOfWork } from '../../src/oidc/unit-of-work.js';
import { recordVerifiedSecret } from '../../src/oidc/verified-client-secret.js';

/**
 * The Client.prototype overrides (src/oidc/provider-internals.ts) replace methods of
 * oidc-provider's own Client class. They are checked against one version range: this file
 * fails when the installed library leaves it, when the library stops calling the methods, or
 * when the provider no longer runs our versions of them.
 */

const root = new URL('../../', import.meta.url);
const readJson = (path: string) => JSON.parse(fs.readFileSync(new URL(path, root), 'utf8')) as Record<string, unknown>;

function parts(version: string): number[] {
  return version.split('-')[0]!.split('.').map(Number);
}

function compare(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

function providerUnderTest() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'test', alg: 'RS256', use: 'sig' };
  return createProvider({
    environment: 'production',
    issuer: 'https://api.example.org',
    dashboardOrigin: 'https://dashboard.example.org',
    // Never queried: building a provider and calling the overrides below reads no client.
    db: {} as Db,
    jwks: { keys: [jwk] },
    cookieKeys: ['a-cookie-key-of-some-length-0000'] as unknown as Keygrip,
  });
}

type ClientPrototype = {
  redirectUriAllowed(this: unknown, value: string): boolean;
  postLogoutRedirectUriAllowed(this: unknown, value: string): boolean;
  compareClientSecret(this: unknown, presented: string): unknown;
};

describe('oidc-provider overrides (provider-internals.ts)', () => {
  it('the installed oidc-provider is inside the range the overrides were checked against', () => {
    const installed = String(readJson('node_modules/oidc-provider/package.json').version);
    expect(compare(installed, OIDC_PROVIDER_RANGE.from), `oidc-provider ${installed}`).toBeGreaterThanOrEqual(0);
    expect(compare(installed, OIDC_PROVIDER_RANGE.below), `oidc-provider ${installed}`).toBeLessThan(0);
    // The dependency range names the same version: widening it means checking the overrides again.
    expect((readJson('package.json').dependencies as Record<string, string>)['oidc-provider']).toBe(`~${OIDC_PROVIDER_RANGE.from}`);
  });

  it('the library still calls the methods where client authentication, the authorization endpoint and the end-session endpoint need them', () => {
    const source = (path: string) => fs.readFileSync(new URL(`node_modules/oidc-provider/lib/${path}`, root), 'utf8');
    expect(source('shared/client_auth.js')).toContain('ctx.oidc.client.compareClientSecret(');
    expect(source('actions/authorization/response_parameters.js')).toContain('ctx.oidc.client.redirectUriAllowed(');
    expect(source('actions/end_session.js')).toContain('client.postLogoutRedirectUriAllowed(');
    // Replays of assertion and DPoP proof jti, and the refresh token's key binding (for public clients only).
    expect(source('shared/jwt_client_auth.js')).toContain('ctx.oidc.provider.ReplayDetection.unique(');
    expect(source('helpers/validate_dpop.js')).toContain('provider.ReplayDetection.unique(');
    expect(source('helpers/set_rt_bindings.js')).toMatch(/case 'none':\s*if \(at\.jkt\)/);
    expect(source('actions/grants/refresh_token.js')).toContain('refreshToken.jkt !== dPoP.thumbprint');
  });

  it("the provider's ReplayDetection and RefreshToken are ours: one insert per claimed value, and the key binding on save", () => {
    const provider = providerUnderTest();
    expect((provider.ReplayDetection as unknown as { unique: { toString(): string } }).unique.toString()).toContain('claimMark');
    expect((provider.RefreshToken as unknown as { prototype: { save: { name: string } } }).prototype.save.name).toBe('bindingSave');
  });

  it("the provider's Client matches redirect URIs by our rules (case-insensitive host, :443 as no port)", () => {
    const prototype = providerUnderTest().Client.prototype as unknown as ClientPrototype;
    const client = { redirectUris: ['https://app.example.org/callback'] };
    // The library's own method compares strings exactly (and needs a real Client instance).
    expect(prototype.redirectUriAllowed.call(client, 'HTTPS://APP.EXAMPLE.ORG:443/callback')).toBe(true);
    expect(prototype.redirectUriAllowed.call(client, 'https://app.example.org/callback/')).toBe(false);
  });

  it("the provider's Client matches post-logout redirect URIs by the same rules", () => {
    const prototype = providerUnderTest().Client.prototype as unknown as ClientPrototype;
    const client = { postLogoutRedirectUris: ['https://app.example.org/signed-out'] };
    expect(prototype.postLogoutRedirectUriAllowed.call(client, 'HTTPS://APP.EXAMPLE.ORG:443/signed-out')).toBe(true);
    expect(prototype.postLogoutRedirectUriAllowed.call(client, 'https://app.example.org/signed-out?next=1')).toBe(false);
    // A client registered without any: nothing matches.
    expect(prototype.postLogoutRedirectUriAllowed.call({}, 'https://app.example.org/signed-out')).toBe(false);
  });

  it("the provider's Client accepts the secret its request verified, for that client only", async () => {
    const prototype = providerUnderTest().Client.prototype as unknown as ClientPrototype;
    const unit = new UnitOfWork(CLIENT_REQUEST, { address: '192.0.2.1', dpopProof: undefined });
    // What middleware/client-secret-check.ts records once the cache verified the secret against the argon2id hash.
    recordVerifiedSecret(unit.caller, 'client', 'the-right-secret');
    const answers = await runInUnit(unit, async () => [
      prototype.compareClientSecret.call({ clientId: 'client' }, 'the-right-secret'),
      prototype.compareClientSecret.call({ clientId: 'client' }, 'the-right-secreT'),
      prototype.compareClientSecret.call({ clientId: 'another-client' }, 'the-right-secret'),
    ]);
    expect(answers).toEqual([true, false, false]);
    // Outside the request the record means nothing.
    expect(prototype.compareClientSecret.call({ clientId: 'client' }, 'the-right-secret')).toBe(false);
  });

  it("the provider's Client answers a secret check synchronously, false for any secret not verified in this request", async () => {
    const secret = 'the-right-secret';
    const hash = await hashClientSecret(secret, MIN_PASSWORD_PARAMS);
    const prototype = providerUnderTest().Client.prototype as unknown as ClientPrototype;
    const client = { clientId: 'client', clientSecret: hash };
    // Used as a library that stopped awaiting it would use it: a Promise here would be truthy.
    const wrong: unknown = prototype.compareClientSecret.call(client, 'a-wrong-secret');
    const unverified: unknown = prototype.compareClientSecret.call(client, secret);
    expect(wrong).toBe(false);
    expect(unverified).toBe(false);
  });
});

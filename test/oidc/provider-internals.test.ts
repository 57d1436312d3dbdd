import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { Context as KoaContext } from 'koa';
import * as oauth from 'oauth4webapi';
import { errors } from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import { PROVIDER_PAYLOAD_FIELDS, type ProviderPayloadField } from '../../src/db/provider-payload.js';
import type { Db } from '../../src/db/database.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { hashClientSecret } from '../../src/oidc/clients/service.js';
import type { Keygrip } from '../../src/oidc/cookie-keys.js';
import {
  APP_ERROR_EVENT,
  asUserinfoProofRefusal,
  basicCredentials,
  DescribedClientAuthRefusal,
  GRANT_ERROR_DETAILS,
  interactionLoginOf,
  logoutXsrf,
  OIDC_PROVIDER_RANGE,
  providerSessionStore,
  REFUSAL_EVENTS,
  renderedRefusal,
  SERVER_ERROR_EVENT,
  sessionIdOfRequest,
  UNUSED_REFUSAL_EVENTS,
} from '../../src/oidc/provider-internals.js';
import { createProvider } from '../../src/oidc/provider.js';
import { CLIENT_REQUEST, runInUnit, UnitOfWork } from '../../src/oidc/unit-of-work.js';
import { recordVerifiedSecret } from '../../src/oidc/verified-client-secret.js';
import { AdapterRecorder } from '../helpers/adapter-recorder.js';
import { fapiTokens, insecure, registerFapiClient } from '../helpers/fapi.js';
import { authorize, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The tripwires of the seam to oidc-provider (src/oidc/provider-internals.ts and its parts;
 * docs/layout.md, "The seam to oidc-provider"): one per reach-in, named by what it relies on.
 * The model overrides replace methods of the library's own classes and are checked against one
 * version range; every other reach-in is checked against the library's source where a grep can
 * tell, and through a real provider and Postgres where it cannot. An upgrade that changes what
 * one relies on fails the test named after it. (The per-request order of adapter calls the unit
 * of work relies on is pinned in provider-call-order.test.ts.)
 */

const root = new URL('../../', import.meta.url);
/** A source file of the installed library (lib/...), as the tripwires below read it. */
const librarySource = (path: string) => fs.readFileSync(new URL(`node_modules/oidc-provider/lib/${path}`, root), 'utf8');
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

  it('Client#compareClientSecret: client authentication (lib/shared/client_auth.js) still calls it on the client', () => {
    expect(librarySource('shared/client_auth.js')).toContain('ctx.oidc.client.compareClientSecret(');
  });

  it('Client#redirectUriAllowed: the authorization endpoint (response_parameters.js) still calls it on the client', () => {
    expect(librarySource('actions/authorization/response_parameters.js')).toContain('ctx.oidc.client.redirectUriAllowed(');
  });

  it('Client#postLogoutRedirectUriAllowed: the end-session endpoint (end_session.js) still calls it on the client', () => {
    expect(librarySource('actions/end_session.js')).toContain('client.postLogoutRedirectUriAllowed(');
  });

  it('ReplayDetection.unique: client assertions and DPoP proofs still claim their jti through it', () => {
    expect(librarySource('shared/jwt_client_auth.js')).toContain('ctx.oidc.provider.ReplayDetection.unique(');
    expect(librarySource('helpers/validate_dpop.js')).toContain('provider.ReplayDetection.unique(');
  });

  it("RefreshToken#save: the library binds only public clients' refresh tokens to the DPoP key, and the refresh grant checks jkt for every client", () => {
    expect(librarySource('helpers/set_rt_bindings.js')).toMatch(/case 'none':\s*if \(at\.jkt\)/);
    expect(librarySource('actions/grants/refresh_token.js')).toContain('refreshToken.jkt !== dPoP.thumbprint');
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

// The reach-ins beyond the model overrides (src/oidc/provider-internals/), each with the
// library source it relies on and, where a grep cannot tell, the behaviour through a real server.
const REDIRECT = 'https://app.example.org/callback';
const { server, staff, clients } = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'openid', 'offline_access'] },
  },
});
const recorder = new AdapterRecorder();

describe('oidc-provider reach-ins (provider-internals/)', () => {
  it("the request-body swap: the library reads the form from ctx.req's iterator", () => {
    const source = librarySource('shared/selective_body.js');
    // replayRequestBody hands it a request whose stream is readable, unencoded, iterable, with a matching Content-Length.
    expect(source).toContain('if (ctx.req.readable) {');
    expect(source).toContain('return readBody(ctx.req, ctx.request.length, ctx.charset);');
    expect(source).toContain('if (req.readableEncoding) {');
    expect(source).toContain('for await (const chunk of req.iterator({ destroyOnReturn: false })) {');
    expect(source).toContain('if (length !== undefined && received !== length) {');
  });

  it('the request-body swap: a body read before the provider reaches it whole (a token request whose form our middleware rewrote)', async () => {
    // redirectUriFromCode appends redirect_uri to the form after reading it: the provider reads the new form.
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: clients.client,
      clientId: clients.client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    expect(tokens.status).toBe(200);
  });

  it('client credentials: client_auth.js reads a Basic value and the form this way', () => {
    const source = librarySource('shared/client_auth.js');
    expect(source).toContain("const authToken = decodeURIComponent(token.replace(/\\+/g, '%20'));");
    expect(source).toContain("const parts = ctx.headers.authorization.split(' ');");
    expect(source).toContain("if (parts.length !== 2 || parts[0].toLowerCase() !== 'basic') {");
    expect(source).toContain("const basic = Buffer.from(parts[1], 'base64').toString('utf8');");
    expect(source).toContain("const i = basic.indexOf(':');");
    expect(source).toContain('if (ctx.oidc.params.client_secret) {\n    clientSecret = ctx.oidc.params.client_secret;');
    expect(librarySource('consts/client_attributes.js')).toContain('export const noVSCHAR = /[^\\x20-\\x7E]/;');
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    expect(basicCredentials(basic('a+client', 'se%3Acret:more'))).toEqual({ clientId: 'a client', secret: 'se:cret:more' });
    expect(basicCredentials(basic('client', 'caf%C3%A9'))).toBeUndefined();
  });

  it('the refusal events: the library announces exactly these *.error names', () => {
    const routes = librarySource('helpers/initialize_app.js');
    const announced = new Set([...routes.matchAll(/error\('([\w.]+\.error)'\)/g)].map((m) => m[1]!));
    // The authorization endpoint's refusals go through their own handler.
    expect(librarySource('shared/authorization_error_handler.js')).toContain("provider.emit('authorization.error', ctx, err);");
    announced.add('authorization.error');
    expect([...announced].sort()).toEqual([...REFUSAL_EVENTS, ...UNUSED_REFUSAL_EVENTS].sort());
  });

  it("server_error: the library's error handlers emit it with (ctx, error)", () => {
    expect(librarySource('shared/error_handler.js')).toContain(`provider.emit('${SERVER_ERROR_EVENT}', ctx, err);`);
    expect(librarySource('shared/authorization_error_handler.js')).toContain(`provider.emit('${SERVER_ERROR_EVENT}', ctx, err);`);
    // The provider is a Koa app: what escapes its middleware is the app's 'error' event.
    expect(librarySource('provider.js')).toContain('export class Provider extends Koa {');
    expect(APP_ERROR_EVENT).toBe('error');
  });

  it("the logout xsrf secret: end_session.js keeps it in session.state.secret and checks the form's xsrf", () => {
    const endSession = librarySource('actions/end_session.js');
    expect(endSession).toContain('const { secret } = ctx.oidc.session.state;');
    expect(endSession).toContain("checkXsrf('could not find logout details'),");
    const xsrf = librarySource('shared/xsrf.js');
    expect(xsrf).toContain('ctx.oidc.session.state = { secret };');
    expect(xsrf).toContain("constantEquals(ctx.oidc.session.state.secret, ctx.oidc.params.xsrf || '')");
    expect(logoutXsrf({ state: { secret: 's3cret' } })).toBe('s3cret');
  });

  it("the request's entities: the library names them and fills these fields", () => {
    expect(librarySource('helpers/grant_common.js')).toContain("ctx.oidc.entity('AccessToken', at);");
    expect(librarySource('actions/grants/refresh_token.js')).toContain("ctx.oidc.entity('RefreshToken', refreshToken);");
    expect(librarySource('actions/grants/authorization_code.js')).toContain("ctx.oidc.entity('AuthorizationCode', code);");
    expect(librarySource('actions/introspection.js')).toContain('ctx.oidc.entity(token.kind, token);');
    expect(librarySource('actions/end_session.js')).toContain("ctx.oidc.entity('IdTokenHint', idTokenHint);");
    // The fields read from them (RequestEntities): the tokens' grantId and jti, a refresh token's first issue.
    for (const model of ['access_token', 'refresh_token', 'authorization_code'])
      expect(librarySource(`models/${model}.js`)).toContain("'grantId',");
    expect(librarySource('models/refresh_token.js')).toContain('this.iiat = this.iat || epochTime();');
  });

  it("ctx.oidc.result: the resume puts the interaction's result there", () => {
    expect(librarySource('actions/authorization/resume.js')).toContain('ctx.oidc.result = result;');
    const ctx = { oidc: { result: { login: { accountId: 'someone' } } } } as unknown as Parameters<typeof interactionLoginOf>[0];
    expect(interactionLoginOf(ctx)).toEqual({ accountId: 'someone' });
  });

  it('ctx.oidc.params.scope: what a validator writes is what the authorization then uses', async () => {
    // offline_access without prompt=consent: the library drops it unless our validator (extraParams) puts it back.
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: clients.client,
      clientId: clients.client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid offline_access read_only',
      login: staff.users.member,
    });
    expect(String(tokens.body.scope).split(' ').sort()).toEqual(['offline_access', 'openid', 'read_only']);
  });

  it('invalid_grant reasons: the library still words each error_detail so', () => {
    // Where each is raised, and how (a template's label is the model's name, as the grant passes it).
    const raised: Record<keyof typeof GRANT_ERROR_DETAILS, [string, string][]> = {
      codeNotFound: [
        ['helpers/grant_source.js', 'throw new InvalidGrant(`${label} not found`);'],
        ['actions/grants/authorization_code.js', "'authorization code',"],
      ],
      refreshNotFound: [['actions/grants/refresh_token.js', "'refresh token not found'"]],
      codeExpired: [['actions/grants/authorization_code.js', "'authorization code is expired'"]],
      codeConsumed: [
        ['helpers/grant_source.js', 'throw new InvalidGrant(`${label} already consumed`);'],
        ['actions/grants/authorization_code.js', "await consumeGrantSource(ctx, code, 'authorization code');"],
      ],
      // Ours (adapter.ts, alreadyUsed), in the library's words for a refresh token.
      codeUsed: [],
      refreshUsed: [['actions/grants/refresh_token.js', "'refresh token already used'"]],
      verifierMismatch: [['helpers/pkce.js', "'code_verifier does not match code_challenge'"]],
      redirectMismatch: [['actions/grants/authorization_code.js', "'authorization code redirect_uri mismatch'"]],
      clientMismatch: [
        ['helpers/grant_source.js', "'client mismatch'"],
        ['actions/grants/refresh_token.js', "'client mismatch'"],
      ],
      refreshExpired: [['actions/grants/refresh_token.js', "'refresh token is expired'"]],
      grantNotFound: [['helpers/grant_source.js', "'grant not found'"]],
      grantExpired: [['helpers/grant_source.js', "'grant is expired'"]],
      proofMissing: [['helpers/sender_constraints.js', "'DPoP proof JWT not provided'"]],
      proofReplayed: [['helpers/validate_dpop.js', "'DPoP proof JWT Replay detected'"]],
      jktMismatch: [['actions/grants/refresh_token.js', "'failed jkt verification'"]],
      dpopJktMismatch: [['helpers/grant_common.js', "'DPoP proof key thumbprint does not match dpop_jkt'"]],
      accountMissingSuffix: [
        ['helpers/grant_common.js', 'throw new InvalidGrant(`${entityLabel} invalid (referenced account not found)`);'],
      ],
    };
    for (const [name, places] of Object.entries(raised)) {
      for (const [file, text] of places) expect(librarySource(file), `${name} in ${file}`).toContain(text);
    }
    expect(Object.keys(raised).sort()).toEqual(Object.keys(GRANT_ERROR_DETAILS).sort());
  });

  it('InvalidClientAuth: a subclass may set its own error_description', () => {
    // The library's class sets its description as a class field (lib/helpers/errors.js), which our subclass sets again.
    expect(librarySource('helpers/errors.js')).toMatch(
      /class InvalidClientAuth extends OIDCProviderError \{\s*error_description = 'client authentication failed';/,
    );
    const refusal = new DescribedClientAuthRefusal('the client assertion is too old');
    expect(refusal).toBeInstanceOf(errors.InvalidClientAuth);
    expect({ status: refusal.statusCode, error: refusal.message, description: refusal.error_description, expose: refusal.expose }).toEqual({
      status: 401,
      error: 'invalid_client',
      description: 'the client assertion is too old',
      expose: true,
    });
  });

  it('refusals as rendered: err_out.js answers an unexposed error as server_error', () => {
    const source = librarySource('helpers/err_out.js');
    expect(source).toMatch(/if \(expose\) \{\s*return \{\s*error: message,/);
    expect(source).toContain("error: 'server_error',\n    error_description: 'oops! something went wrong',");
    expect(renderedRefusal(new errors.InvalidGrant('refresh token not found'))).toEqual({
      error: 'invalid_grant',
      error_description: 'grant request is invalid',
      statusCode: 400,
    });
    expect(renderedRefusal({ message: 'a database error', statusCode: 500 })).toEqual({
      error: 'server_error',
      error_description: 'oops! something went wrong',
      statusCode: 500,
    });
  });

  it('the client-assertion hook runs before the jti is claimed', () => {
    // client-assertions.ts: a refused assertion's jti stays unused.
    const source = librarySource('shared/jwt_client_auth.js');
    const hook = source.indexOf('await assertJwtClientAuthClaimsAndHeader(');
    const claim = source.indexOf('await ctx.oidc.provider.ReplayDetection.unique(');
    expect(hook).toBeGreaterThan(0);
    expect(claim).toBeGreaterThan(hook);
  });

  it("UserInfo's proof refusals: the library answers InvalidDpopProof with 401", () => {
    const source = librarySource('shared/set_www_authenticate_header.js');
    expect(source).toContain('if (err instanceof InvalidDpopProof || err instanceof UseDpopNonce) {');
    expect(source).toContain('err.status = err.statusCode = 401;');
    const error = new errors.InvalidDpopProof('the DPoP proof is not a JWT');
    asUserinfoProofRefusal(error);
    expect([error.status, error.statusCode]).toEqual([401, 401]);
  });

  it('find with ignoreExpiration: the models still take the option', () => {
    expect(librarySource('models/base_model.js')).toContain('static async find(value, { ignoreExpiration = false } = {}) {');
    expect(librarySource('models/base_model.js')).toContain('await this.verify(stored, { ignoreExpiration });');
  });

  it('Interaction#session: the resume compares only a session uid the interaction still holds', () => {
    const resume = librarySource('actions/authorization/resume.js');
    expect(resume).toContain('session: originSession,');
    expect(resume).toContain('if (originSession?.uid && originSession.uid !== session.uid) {');
    expect(librarySource('models/interaction.js')).toContain("'session',");
  });

  it('Interaction#parJti: the library stores it and respond.js consumes it', () => {
    expect(librarySource('models/interaction.js')).toContain("'parJti',");
    expect(librarySource('actions/authorization/interactions.js')).toContain(
      'parJti: oidc.entities.PushedAuthorizationRequest?.jti || oidc.entities.Interaction?.parJti,',
    );
    expect(librarySource('actions/authorization/respond.js')).toContain(
      'if (!pushedAuthorizationRequest && ctx.oidc.entities.Interaction?.parJti) {',
    );
    // A used pushed request is consumed, not deleted: its row's consumed_at says it was used.
    expect(librarySource('actions/authorization/respond.js')).toContain('await pushedAuthorizationRequest?.consume();');
  });

  it("the provider's session and its cookie: a new Session signed in with loginAccount, saved, its jti in cookieName('session'), found again by Session.get", async () => {
    const provider = server.runtime.oidc.provider('production');
    // secure: the request is plain HTTP (as behind a TLS-terminating proxy); the jar is told otherwise.
    const store = providerSessionStore(provider, {
      secure: true,
      options: { signed: true, httpOnly: true, sameSite: 'lax', secure: true, overwrite: true },
    });
    const request = (cookie?: string) => {
      const req = new http.IncomingMessage(new net.Socket());
      Object.assign(req, { method: 'GET', url: '/', headers: { host: 'api.example.org', ...(cookie ? { cookie } : {}) } });
      return provider.createContext(req, new http.ServerResponse(req)) as unknown as KoaContext;
    };
    expect(await store.find(request())).toBeUndefined();
    const session = store.create({ accountId: staff.users.member.id, amr: ['pwd'], acr: 'urn:almoner:acr:pwd', loginTs: 1_700_000_000 });
    expect(typeof session.uid).toBe('string');
    await session.save(60);
    const ctx = request();
    store.setCookie(ctx, session, 60);
    const set = ctx.res.getHeader('set-cookie') as string[];
    expect(set.find((c) => c.startsWith(`${provider.cookieName('session')}=${session.jti};`))).toMatch(/; secure; httponly/);
    const cookies = set.map((c) => c.split(';')[0]).join('; ');
    // What the unit of work's first read looks up (stack/provider-stack.ts): the cookie's value is the session's id.
    expect(sessionIdOfRequest(provider, request(cookies))).toBe(session.jti);
    const found = await store.find(request(cookies));
    expect({ uid: found?.uid, accountId: found?.accountId, amr: found?.amr, exp: typeof found?.exp }).toEqual({
      uid: session.uid,
      accountId: staff.users.member.id,
      amr: ['pwd'],
      exp: 'number',
    });
    // A step-up's fields are kept by the next save.
    found!.amr = ['pwd', 'otp'];
    found!.acr = 'urn:almoner:acr:mfa';
    await found!.save(60);
    expect((await store.find(request(cookies)))?.amr).toEqual(['pwd', 'otp']);
    await found!.destroy();
    // A cookie that names a session no longer stored is read as a signed-out session (replaced at the next sign-in).
    expect((await store.find(request(cookies)))?.accountId).toBeUndefined();
  });
});

describe("oidc-provider's stored payloads (src/db/provider-payload.ts)", () => {
  it('stored payloads: each field the SQL relies on is stored by the library with its type', async () => {
    const SCOPES = ['openid', 'offline_access', 'read_only'];
    recorder.start();
    try {
      // A user's authorization (Interaction, Session, Grant, code, tokens) and a refresh.
      const client = clients.client;
      const first = await authorize(server, {
        environment: 'production',
        clientId: client.client_id,
        redirectUri: REDIRECT,
        scope: 'openid offline_access read_only',
        login: staff.users.member,
      });
      const code = first.callback.searchParams.get('code')!;
      const tokens = await tokenRequest(server, 'production', client, {
        grant_type: 'authorization_code',
        code,
        code_verifier: first.verifier,
      });
      await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string });
      // DPoP-bound tokens (jkt) and a client's own token (ClientCredentials).
      // Without bank-data scopes: no FDX consent to arrange.
      const fapi = { ...(await registerFapiClient(server, { scopes: SCOPES })), scope: SCOPES.join(' ') };
      await fapiTokens(server, fapi, { login: staff.users.admin });
      const own = await oauth.clientCredentialsGrantRequest(fapi.as, fapi.client, fapi.auth, {}, { DPoP: fapi.dpop, ...insecure });
      expect(own.status).toBe(200);
    } finally {
      recorder.stop();
    }
    const saved = recorder.take().filter((c) => c.method === 'upsert');
    const problems: string[] = [];
    const typeOf = (value: unknown) => (value === null ? 'null' : typeof value);
    for (const [field, spec] of Object.entries(PROVIDER_PAYLOAD_FIELDS) as [string, ProviderPayloadField][]) {
      for (const model of spec.models) {
        const payloads = saved.filter((c) => c.model === model).map((c) => c.payload!);
        if (payloads.length === 0) problems.push(`no ${model} was saved`);
        const carrying = payloads.filter((p) => p[field] !== undefined);
        if (!spec.optional && carrying.length < payloads.length) problems.push(`a ${model} without ${field}`);
        if (carrying.length === 0) problems.push(`no ${model} with ${field}`);
        for (const p of carrying) if (typeOf(p[field]) !== spec.type) problems.push(`${model}.${field} is ${typeOf(p[field])}`);
        for (const member of spec.paths ?? []) {
          const reached = carrying.some((p) =>
            valuesAt(p[field], member.split('.')).some((v) => typeof v === 'string' || typeof v === 'number'),
          );
          if (!reached) problems.push(`no ${model}.${field}.${member}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

/** The values at a dotted path ('*' any member). */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [value];
  if (!value || typeof value !== 'object') return [];
  const [head, ...rest] = path;
  const members = head === '*' ? Object.values(value) : [(value as Record<string, unknown>)[head!]];
  return members.flatMap((m) => valuesAt(m, rest));
}

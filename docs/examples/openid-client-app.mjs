// The openid-client 6 example of docs/integrations.md ("JavaScript: openid-client 6"): a
// standard client (HTTP Basic) against the sandbox of `npm start` (dev profile, demo data). It
// reads API, CLIENT_ID and CLIENT_SECRET.
import readline from 'node:readline/promises';
import * as client from 'openid-client';

const API = process.env.API ?? 'http://127.0.0.1:3001';
const REDIRECT_URI = 'http://127.0.0.1:8080/callback'; // as registered; nothing needs to answer there
// HTTP Basic: openid-client's default for a secret is client_secret_post, which Almoner refuses.
const config = await client.discovery(
  new URL(API),
  process.env.CLIENT_ID,
  undefined,
  client.ClientSecretBasic(process.env.CLIENT_SECRET),
  { execute: [client.allowInsecureRequests] }, // plain http on loopback: the dev profile only
);

/** The OAuth error code of a refused token request, as openid-client 6 throws it. */
function oauthError(error) {
  // 401 (invalid_grant, invalid_client): Almoner's Basic challenge carries the code.
  if (error instanceof client.WWWAuthenticateChallengeError) return error.cause.find((c) => c.scheme === 'basic')?.parameters.error;
  // 400 without a challenge (invalid_request, unsupported_grant_type…): the JSON body's.
  if (error instanceof client.ResponseBodyError) return error.error;
  throw error;
}

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce(); // required by Almoner on every request
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: REDIRECT_URI,
  scope: 'openid read_only',
  state,
  nonce,
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
});
console.log(`Open this address in a browser, sign in and approve:\n\n  ${url.href}\n`);
const terminal = readline.createInterface({ input: process.stdin, output: process.stdout });
const callback = new URL((await terminal.question('Then paste the address the browser went to:\n')).trim());
terminal.close();

// The callback: exchange the code, checking state, iss (RFC 9207) and, in the ID token, the nonce.
const checks = { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce };
const tokens = await client.authorizationCodeGrant(config, callback, checks);
console.log(`\n${tokens.token_type} token for "${tokens.scope}", ID token for ${tokens.claims().sub}`);
const donations = await client.fetchProtectedResource(config, tokens.access_token, new URL('/v1/donations?limit=2', API), 'GET');
console.log(`GET /v1/donations: ${donations.status}, ${(await donations.json()).results.length} donations`);
// Every refresh returns a new refresh token: store it, the one used is spent.
const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
console.log(`refreshed: ${refreshed.refresh_token !== tokens.refresh_token ? 'a new refresh token' : 'the same refresh token'}`);

// How refusals arrive. The same callback again: its code was used (and what it issued is revoked).
const replayed = await client.authorizationCodeGrant(config, callback, checks).catch((error) => error);
if (oauthError(replayed) !== 'invalid_grant') throw replayed;
console.log(replayed.constructor.name, replayed.status, replayed.code, JSON.stringify(await replayed.response.json()));

// A refresh token used already, revoked, or ended with its authorization: the same.
const stale = await client.refreshTokenGrant(config, tokens.refresh_token).catch((error) => error);
if (oauthError(stale) !== 'invalid_grant') throw stale;
console.log(stale.status, oauthError(stale));

// A 400 has no challenge: a ResponseBodyError, its code in `error`.
const unknown = await client.genericGrantRequest(config, 'urn:example:no-such-grant', {}).catch((error) => error);
if (!(unknown instanceof client.ResponseBodyError)) throw unknown;
console.log(unknown.constructor.name, unknown.status, oauthError(unknown));

// The secret alone makes openid-client send it in the body: invalid_client.
const postConfig = await client.discovery(new URL(API), process.env.CLIENT_ID, process.env.CLIENT_SECRET, undefined, {
  execute: [client.allowInsecureRequests],
});
const inBody = await client.refreshTokenGrant(postConfig, refreshed.refresh_token).catch((error) => error);
if (oauthError(inBody) !== 'invalid_client') throw inBody;
console.log(inBody.status, oauthError(inBody));

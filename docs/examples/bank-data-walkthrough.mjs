// The aggregator's side of the bank-data walkthrough (docs/bank-data.md, "Walkthrough"): a
// fapi2 client on openid-client 6, against the sandbox of `npm start` (dev profile, demo data).
// It reads CLIENT_ID and KEYS_FILE (what `clients add --generate-keys` printed and wrote) and API.
import fs from 'node:fs';
import { subtle } from 'node:crypto';
import readline from 'node:readline/promises';
import * as client from 'openid-client';

const API = process.env.API ?? 'http://127.0.0.1:3001'; // the sandbox API host: issuer, token endpoint, FDX
const REDIRECT_URI = 'http://127.0.0.1:8080/callback'; // as registered; nothing needs to answer there

// The client's private key: its public half is what the server registered.
const [jwk] = JSON.parse(fs.readFileSync(process.env.KEYS_FILE, 'utf8')).keys;
const privateKey = await subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);

const config = await client.discovery(
  new URL(API),
  process.env.CLIENT_ID,
  { id_token_signed_response_alg: 'ES256' }, // fapi2 ID Tokens are ES256 (openid-client expects RS256 otherwise)
  client.PrivateKeyJwt({ key: privateKey, kid: jwk.kid }), // a fresh assertion, valid 60 s, for every request
  { execute: [client.allowInsecureRequests] }, // plain http on 127.0.0.1 (dev profile): drop it in production
);
// DPoP: one key pair, held in memory; every token the client gets is bound to it.
const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));

// 1. Push the authorization request (PAR) with the FDX consent request.
const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const consentRequest = {
  durationType: 'TIME_BOUND',
  durationPeriod: 90,
  lookbackPeriod: 30,
  resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] }],
};
const authorizationUrl = await client.buildAuthorizationUrlWithPAR(
  config,
  {
    redirect_uri: REDIRECT_URI,
    scope: 'openid offline_access read_only read:bank_accounts',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    authorization_details: JSON.stringify([{ type: 'fdx_v1.0', consentRequest }]),
  },
  { DPoP: dpop },
);

// 2. The user approves in a browser; the address it is sent back to carries the code.
console.log(`Open this address in a browser within 60 seconds:\n\n  ${authorizationUrl.href}\n`);
const terminal = readline.createInterface({ input: process.stdin, output: process.stdout });
const callbackUrl = new URL((await terminal.question('Then paste the address the browser went to:\n')).trim());
terminal.close();

// 3. The code exchange: private_key_jwt and a DPoP proof; state, iss and the ID Token are checked.
const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedState: state }, undefined, {
  DPoP: dpop,
});
const { consentId } = tokens.authorization_details[0];
console.log(`\ntokens (${tokens.token_type}) for ${tokens.claims().sub}, consent ${consentId}`);

/** An API call with a DPoP-bound token (openid-client adds the proof); the JSON answer, none for a 204. */
async function call(accessToken, method, path, body) {
  const url = new URL(path, API);
  const headers = new Headers(body ? { 'content-type': 'application/json' } : {});
  const payload = body && JSON.stringify(body);
  const response = await client.fetchProtectedResource(config, accessToken, url, method, payload, headers, { DPoP: dpop });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

// 4. FDX: the accounts the user ticked, and one account's latest transactions (within the 30-day lookback).
const { accounts } = await call(tokens.access_token, 'GET', '/fdx/v6/accounts');
for (const account of accounts) console.log(`account ${account.accountId} ${account.nickName} ${account.accountNumberDisplay}`);
const { transactions } = await call(tokens.access_token, 'GET', `/fdx/v6/accounts/${accounts[0].accountId}/transactions?limit=10`);
for (const t of transactions.slice(0, 3)) console.log(`  ${t.transactionTimestamp} ${t.debitCreditMemo} ${t.amount} ${t.description}`);

// A refresh gives a new access token; the refresh token stays the same (FAPI 2.0: not rotated).
const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP: dpop });

// 5. The Consent API, with the client's own token: client_credentials, no scope, DPoP-bound.
const own = await client.clientCredentialsGrant(config, undefined, { DPoP: dpop });
const consent = await call(own.access_token, 'GET', `/fdx/v6/consents/${consentId}`);
const shared = consent.resources.filter((r) => r.resourceType === 'ACCOUNT').map((r) => r.resourceId);
console.log(`consent ${consent.status} until ${consent.expirationTime}, accounts ${shared.join(', ')}`);

// 6. Revoke it: every token of the consent stops at once.
await call(own.access_token, 'PUT', `/fdx/v6/consents/${consentId}/revocation`, { reason: 'USER_ACTION', initiator: 'INDIVIDUAL' });
const { revocations } = await call(own.access_token, 'GET', `/fdx/v6/consents/${consentId}/revocation`);
console.log(`revoked: ${JSON.stringify(revocations)}`);
const refused = await call(refreshed.access_token, 'GET', '/fdx/v6/accounts').catch((error) => error);
if (!(refused instanceof client.WWWAuthenticateChallengeError)) throw new Error('a revoked consent still serves data');
console.log(`after the revocation: ${refused.status} ${refused.cause[0].parameters.error}`);

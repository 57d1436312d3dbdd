import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { ASSERTION_TYPE, clientAssertion, fapiTokens, insecure, keyPair, registerFapiClient } from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { createAccount } from '../helpers/fdx.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { server, staff } = useOAuthServer();

describe('a fapi2 client: PAR, private_key_jwt and DPoP (docs/bank-data.md)', () => {
  it('pushes its request, signs in the user, and gets DPoP-bound tokens and an ES256 ID token', async () => {
    const fapi = await registerFapiClient(server);
    await createAccount(server.db, staff, 'production');
    const tokens = await fapiTokens(server, fapi, { login: staff.users.admin });
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.refresh_token).toBeTruthy();
    const [header] = tokens.id_token!.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString()).alg).toBe('ES256');
    const refreshed = await oauth.processRefreshTokenResponse(
      fapi.as,
      fapi.client,
      await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: fapi.dpop, ...insecure }),
    );
    expect(refreshed.token_type).toBe('dpop');
    // Not rotated (FAPI 2.0 §5.3.2.1 item 9): the same refresh token goes on working.
    expect(refreshed.refresh_token ?? tokens.refresh_token).toBe(tokens.refresh_token);
  });
});

describe('refusals of a fapi2 token request say why (oauth4webapi)', () => {
  /** A fapi2 client without bank-data scopes: these refusals concern its DPoP proofs. */
  const client = async () => ({
    ...(await registerFapiClient(server, { scopes: ['openid', 'offline_access', 'read_only'] })),
    scope: 'openid offline_access read_only',
  });
  /** The OAuth error oauth4webapi read from the response. */
  const refusalOf = async (processing: Promise<unknown>) => {
    const error = (await processing.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )) as oauth.ResponseBodyError | undefined;
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    return { status: error!.status, error: error!.error, description: error!.error_description };
  };

  it('no DPoP proof is invalid_dpop_proof, at a refresh and at a client-credentials grant', async () => {
    const fapi = await client();
    const tokens = await fapiTokens(server, fapi, { login: staff.users.admin });
    const refresh = oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, insecure);
    expect(await refusalOf(refresh.then((response) => oauth.processRefreshTokenResponse(fapi.as, fapi.client, response)))).toEqual({
      status: 400,
      error: 'invalid_dpop_proof',
      description: expect.stringMatching(/^a DPoP proof is required/),
    });
    const own = oauth.clientCredentialsGrantRequest(fapi.as, fapi.client, fapi.auth, {}, insecure);
    expect(await refusalOf(own.then((response) => oauth.processClientCredentialsResponse(fapi.as, fapi.client, response)))).toMatchObject({
      status: 400,
      error: 'invalid_dpop_proof',
    });
  });

  it('a refresh with another key says the refresh token is bound to another key', async () => {
    const fapi = await client();
    const tokens = await fapiTokens(server, fapi, { login: staff.users.admin });
    const other = oauth.DPoP(fapi.client, await keyPair());
    const refresh = oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: other, ...insecure });
    expect(await refusalOf(refresh.then((response) => oauth.processRefreshTokenResponse(fapi.as, fapi.client, response)))).toEqual({
      status: 400,
      error: 'invalid_grant',
      description: 'the DPoP proof is signed with another key than the one the refresh token is bound to',
    });
  });

  it('a proof of typ JWT is told that typ must be dpop+jwt; a replayed proof that it was already used', async () => {
    const fapi = await client();
    const tokenUrl = fapi.as.token_endpoint!;
    const send = async (proof: string) => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await clientAssertion(fapi, fapi.signingKey),
        }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await send(await dpopProof(fapi.dpopKey, { method: 'POST', url: tokenUrl }, {}, { typ: 'JWT' }))).toEqual({
      status: 400,
      body: { error: 'invalid_dpop_proof', error_description: "the DPoP proof's typ header must be dpop+jwt" },
    });
    const proof = await dpopProof(fapi.dpopKey, { method: 'POST', url: tokenUrl });
    expect((await send(proof)).status).toBe(200);
    expect(await send(proof)).toEqual({
      status: 400,
      body: { error: 'invalid_dpop_proof', error_description: 'this DPoP proof was already used: make a new proof for every request' },
    });
  });
});

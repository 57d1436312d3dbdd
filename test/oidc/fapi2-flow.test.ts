import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { fapiTokens, insecure, registerFapiClient } from '../helpers/fapi.js';
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

import type { Configuration } from 'oidc-provider';
import { DescribedClientAuthRefusal } from './provider-internals.js';
import { assertionTimeProblem } from '../authorizations/fapi-profile.js';

/**
 * What a client assertion (private_key_jwt, a fapi2 client's authentication) must be beyond
 * what the library checks (signature, iss, sub, aud, jti once, exp not past), at every endpoint
 * where a client authenticates (token, pushed requests, revocation, introspection): made just
 * now and short-lived (FAPI 2.0 §5.3.2.1; docs/bank-data.md, "Client assertions"), so a stolen
 * assertion is worth a minute, not ten years. The library calls this hook with the verified
 * claims, before it claims the jti, so a refused assertion's jti stays unused (an order of
 * lib/shared/jwt_client_auth.js held by test/oidc/provider-internals.test.ts, "the client-assertion hook runs before the jti is claimed").
 */

/** invalid_client (401) whose description says which rule the assertion broke; the library's says only "client authentication failed". */
const AssertionRefused = DescribedClientAuthRefusal;

export const checkClientAssertion: NonNullable<Configuration['assertJwtClientAuthClaimsAndHeader']> = (ctx, claims) => {
  // The library's own rule, which this hook replaces: under FAPI 2.0 the audience is the issuer identifier, as a string.
  if (ctx.oidc.isFapi('2.0') && claims.aud !== ctx.oidc.issuer)
    throw new AssertionRefused("the client assertion's aud must be the issuer identifier, as a string");
  const problem = assertionTimeProblem(claims);
  if (problem) throw new AssertionRefused(problem);
};

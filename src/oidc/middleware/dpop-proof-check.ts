import { decodeJwt, decodeProtectedHeader } from 'jose';
import { errors } from 'oidc-provider';
import { FAPI_SIGNING_ALGS, isFreshIat, isPublicSigningJwk, PROOF_IAT_RULE } from '../../authorizations/fapi-profile.js';
import { formatChallenge } from '../../http/oauth-problem.js';
import { headerCount } from '../../http/repeated-header.js';
import { asUserinfoProofRefusal } from '../provider-internals.js';
import { API_ROUTES } from '../routes.js';
import type { RequestCheck } from './steps.js';

/** The provider's endpoints that read a DPoP proof (RFC 9449): the token endpoint, pushed requests, UserInfo. */
const PROOF_ENDPOINTS: ReadonlySet<string> = new Set([API_ROUTES.token, API_ROUTES.pushedAuthorization, API_ROUTES.userinfo]);

/** A typ as jose compares it: case-insensitive, with or without its "application/" prefix. */
const normalisedTyp = (typ: unknown) => (typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : undefined);

/**
 * What is wrong with a DPoP proof on its face, or undefined: its form, typ, algorithm, key and
 * iat. Its signature, htm, htu, ath and jti are the library's to check (and the gateway's, for
 * its own calls): this only refuses, it never accepts.
 */
export function proofProblem(proof: string): string | undefined {
  let header;
  let payload;
  try {
    header = decodeProtectedHeader(proof);
    payload = decodeJwt(proof);
  } catch {
    return 'the DPoP proof is not a JWT (three base64url parts: header.payload.signature)';
  }
  if (normalisedTyp(header.typ) !== 'dpop+jwt') return "the DPoP proof's typ header must be dpop+jwt";
  if (!(FAPI_SIGNING_ALGS as readonly unknown[]).includes(header.alg))
    return `the DPoP proof must be signed with ${FAPI_SIGNING_ALGS.join(', ')}`;
  if (!isPublicSigningJwk(header.jwk))
    return "the DPoP proof's header must carry the public key that signed it (jwk), and no private member";
  if (!isFreshIat(payload.iat)) return `the DPoP proof was not made just now: ${PROOF_IAT_RULE}`;
  return undefined;
}

/**
 * The DPoP proof of a request to the token, PAR or UserInfo endpoint, before the provider: one
 * DPoP header, a proof of the right type, algorithm and key, made within the window the gateway
 * holds too (authorizations/fapi-profile.ts; the library alone accepts 300 seconds either way),
 * and a refusal that says which rule failed (the library says "invalid DPoP key binding" for
 * most). Refused as the provider refuses a proof: 400 invalid_dpop_proof, and at UserInfo 401
 * with a DPoP challenge (RFC 9449 7.1).
 */
export function dpopProofCheck(issuer: string): RequestCheck {
  return (ctx) => {
    const count = headerCount(ctx.req, 'dpop');
    if (count === 0 || !PROOF_ENDPOINTS.has(ctx.path) || ctx.method === 'OPTIONS') return;
    const problem = count > 1 ? 'send exactly one DPoP header' : proofProblem(ctx.get('dpop'));
    if (!problem) return;
    const error = new errors.InvalidDpopProof(problem);
    if (ctx.path === API_ROUTES.userinfo) {
      asUserinfoProofRefusal(error);
      const algs = FAPI_SIGNING_ALGS.join(' ');
      ctx.set(
        'WWW-Authenticate',
        formatChallenge('DPoP', { realm: issuer, error: 'invalid_dpop_proof', error_description: problem, algs }),
      );
    }
    throw error;
  };
}

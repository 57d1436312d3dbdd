import { calculateJwkThumbprint, type JWK } from 'jose';

/**
 * The rules of the FAPI 2.0 profile that both the authorization server (src/oidc/) and the
 * resource gateway (src/gateway/) hold, defined once so the two cannot drift apart
 * (docs/bank-data.md, "Profiles" and "Calling the API"): what a client may sign with, how
 * far its clock may run ahead, how fresh a DPoP proof and a client assertion must be, and the
 * key thumbprint a DPoP-bound token names.
 */

/** The JWS algorithms FAPI 2.0 allows for what a client signs (§5.4): client assertions and DPoP proofs. */
export const FAPI_SIGNING_ALGS = ['PS256', 'ES256', 'EdDSA'] as const;

/** How far ahead of the server's clock a client's clock may run (FAPI 2.0 §5.3.2.1: 10 seconds). */
export const CLOCK_TOLERANCE_SECONDS = 10;

/** How long ago a DPoP proof or a client assertion may have been made (its iat). */
export const MAX_PROOF_AGE_SECONDS = 60;

/** The longest lifetime a client assertion may claim (exp − iat). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

const epoch = () => Math.floor(Date.now() / 1000);

/** The rule a DPoP proof's iat is held to, in the words every refusal of it uses. */
export const PROOF_IAT_RULE = `iat must be within ${MAX_PROOF_AGE_SECONDS} seconds before and ${CLOCK_TOLERANCE_SECONDS} seconds after the server's clock`;

/**
 * Whether a signed statement's iat is fresh: made at most MAX_PROOF_AGE_SECONDS ago and at
 * most CLOCK_TOLERANCE_SECONDS ahead of the server's clock (both ends included).
 */
export function isFreshIat(iat: unknown, now = epoch()): iat is number {
  return typeof iat === 'number' && Number.isFinite(iat) && iat >= now - MAX_PROOF_AGE_SECONDS && iat <= now + CLOCK_TOLERANCE_SECONDS;
}

/**
 * What is wrong with a client assertion's times (FAPI 2.0 §5.3.2.1; docs/bank-data.md,
 * "Client assertions"), or undefined: iat is required and fresh, and exp is at most
 * MAX_ASSERTION_LIFETIME_SECONDS after it. exp itself (present, not past) is the library's.
 */
export function assertionTimeProblem(claims: { iat?: unknown; exp?: unknown }, now = epoch()): string | undefined {
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'the client assertion must carry iat, the time it was made';
  if (iat > now + CLOCK_TOLERANCE_SECONDS)
    return `the client assertion's iat is more than ${CLOCK_TOLERANCE_SECONDS} seconds ahead of the server's clock`;
  if (iat < now - MAX_PROOF_AGE_SECONDS)
    return `the client assertion was made more than ${MAX_PROOF_AGE_SECONDS} seconds ago (iat): make a new one for each request`;
  if (typeof exp === 'number' && exp - iat > MAX_ASSERTION_LIFETIME_SECONDS)
    return `the client assertion's exp must be at most ${MAX_ASSERTION_LIFETIME_SECONDS} seconds after its iat`;
  return undefined;
}

/** The key types a proof may be signed with, and the members RFC 7638 requires of each. */
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'x', 'y'],
  OKP: ['crv', 'x'],
  RSA: ['e', 'n'],
};

/**
 * Whether `jwk` is a public key of a type a FAPI 2.0 signature uses (EC, OKP, RSA), with the
 * members its thumbprint is made of, and no private member.
 */
export function isPublicSigningJwk(jwk: unknown): jwk is JWK {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk) || 'd' in jwk) return false;
  const members = PUBLIC_MEMBERS[String((jwk as { kty?: unknown }).kty)];
  return members !== undefined && members.every((m) => typeof (jwk as Record<string, unknown>)[m] === 'string');
}

/** The RFC 7638 (SHA-256) thumbprint of a public key: what a DPoP-bound token's jkt names. */
export function jwkThumbprint(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(jwk, 'sha256');
}

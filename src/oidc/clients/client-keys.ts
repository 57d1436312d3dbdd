import { FAPI_SIGNING_ALGS as CLIENT_ASSERTION_ALGS } from '../../authorizations/fapi-profile.js';
import { outboundUrlProblem, type Profile } from '../../webhooks/targets.js';

/**
 * A fapi2 client's public keys (docs/bank-data.md, "Registering a bank-data client"): the keys
 * its client assertions (private_key_jwt) are signed with. Only algorithms FAPI 2.0 allows are
 * accepted (PS256, ES256, EdDSA), so each key must be able to produce one of them: RSA of at
 * least 2048 bits, EC P-256 or OKP Ed25519. Never a private key: a registration is not a
 * place for the client's secrets.
 */
export const MAX_CLIENT_KEYS = 10;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** What is wrong with one JWK, or undefined. */
function keyProblem(jwk: unknown): string | undefined {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'must be a JWK object';
  const key = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((m) => m in key))
    return `is a private or symmetric key (it has "${PRIVATE_MEMBERS.find((m) => m in key)}"): register the public key only`;
  if (key.use !== undefined && key.use !== 'sig') return 'use must be "sig" (or absent)';
  if (key.alg !== undefined && !(CLIENT_ASSERTION_ALGS as readonly unknown[]).includes(key.alg))
    return `alg must be one of ${CLIENT_ASSERTION_ALGS.join(', ')} (or absent)`;
  if (key.kty === 'RSA') {
    if (typeof key.n !== 'string' || typeof key.e !== 'string') return 'an RSA key needs n and e';
    if (Buffer.from(key.n, 'base64url').length * 8 < 2048) return 'an RSA key must have at least 2048 bits';
    if (key.alg !== undefined && key.alg !== 'PS256') return 'an RSA key signs with PS256 here (RS256 is not allowed by FAPI 2.0)';
    return undefined;
  }
  if (key.kty === 'EC') {
    if (key.crv !== 'P-256' || typeof key.x !== 'string' || typeof key.y !== 'string') return 'an EC key must be on P-256 with x and y';
    if (key.alg !== undefined && key.alg !== 'ES256') return 'a P-256 key signs with ES256';
    return undefined;
  }
  if (key.kty === 'OKP') {
    if (key.crv !== 'Ed25519' || typeof key.x !== 'string') return 'an OKP key must be Ed25519 with x';
    if (key.alg !== undefined && key.alg !== 'EdDSA') return 'an Ed25519 key signs with EdDSA';
    return undefined;
  }
  return 'kty must be RSA, EC or OKP';
}

/** Every problem of a JWK Set as `path: problem`, the path relative to the set. */
export function jwksProblems(jwks: unknown): { path: (string | number)[]; message: string }[] {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray((jwks as { keys?: unknown }).keys))
    return [{ path: [], message: 'must be a JWK Set {"keys": [...]}' }];
  const extra = Object.keys(jwks).filter((k) => k !== 'keys');
  const keys = (jwks as { keys: unknown[] }).keys;
  const problems: { path: (string | number)[]; message: string }[] = extra.map((k) => ({
    path: [k],
    message: 'is not a member of a JWK Set',
  }));
  if (keys.length === 0) problems.push({ path: ['keys'], message: 'at least one key is required' });
  if (keys.length > MAX_CLIENT_KEYS) problems.push({ path: ['keys'], message: `at most ${MAX_CLIENT_KEYS} keys` });
  const kids = new Set<string>();
  keys.forEach((key, index) => {
    const problem = keyProblem(key);
    if (problem) problems.push({ path: ['keys', index], message: problem });
    const kid = (key as { kid?: unknown } | null)?.kid;
    if (kid !== undefined && typeof kid !== 'string') problems.push({ path: ['keys', index, 'kid'], message: 'must be a string' });
    if (typeof kid === 'string') {
      if (kids.has(kid)) problems.push({ path: ['keys', index, 'kid'], message: `${kid} is used by another key of the set` });
      kids.add(kid);
    }
  });
  return problems;
}

/**
 * What is wrong with a jwks_uri on its face, or undefined: an absolute http(s) URL, no
 * credentials, no fragment. Where it may point is the profile's (jwksUriAddressProblem).
 */
export function jwksUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash) return 'must not have a fragment';
  return undefined;
}

/**
 * Where a jwks_uri may point in this profile: the server fetches it, so it is held to the
 * webhook address rules (webhooks/targets.ts): https to a public address in production (no
 * loopback, private or other special-purpose address, whatever its spelling); the dev profile
 * also allows http on loopback. Checked again at every fetch (key-set-fetch.ts).
 */
export function jwksUriAddressProblem(uri: string, profile: Profile): string | undefined {
  return outboundUrlProblem(uri, profile);
}

/**
 * Lifetimes (seconds) of what the providers issue, in a module of its own so code that must
 * not load oidc-provider (the admin CLI's key rotation) can read them.
 */
export const ACCESS_TOKEN_TTL = 900;
export const AUTHORIZATION_CODE_TTL = 60;
/** A pushed authorization request's request_uri (RFC 9126; docs/bank-data.md). */
export const PUSHED_REQUEST_TTL = 60;
export const REFRESH_TOKEN_TTL = 31 * 86_400;
export const INTERACTION_TTL = 3600;
// A browser session's lifetime is the identity's (its record ends with it).
export { SESSION_SECONDS as SESSION_TTL } from '../identity/sessions.js';
export const ID_TOKEN_TTL = 3600;

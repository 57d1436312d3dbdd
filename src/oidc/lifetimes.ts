/**
 * Lifetimes (seconds) of what the providers issue, in a module of its own so code that must
 * not load oidc-provider (the admin CLI's key rotation) can read them.
 */
export const ACCESS_TOKEN_TTL = 900;
export const AUTHORIZATION_CODE_TTL = 60;
export const REFRESH_TOKEN_TTL = 31 * 86_400;
export const INTERACTION_TTL = 3600;
export const SESSION_TTL = 14 * 86_400;
export const ID_TOKEN_TTL = 3600;

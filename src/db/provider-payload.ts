/**
 * The fields of oidc-provider's stored payloads (the oidc_models.payload column, as the
 * library hands them to the adapter) that our code reads or writes outside the library: in SQL
 * (the `->>` and `->` operators, jsonb_set, a jsonpath) and on rows read back. The library
 * documents the adapter's interface, not what a payload holds, so each of these is a reliance
 * on its models' shapes (lib/models/*.js) of the version in
 * src/oidc/provider-internals.ts (OIDC_PROVIDER_RANGE). Listed here, below every layer that
 * uses them (db/, authorizations/, gateway/, oidc/ may all import db/).
 *
 * test/oidc/provider-internals.test.ts ("stored payloads: each field the SQL relies on is
 * stored by the library with its type") creates them through the real provider and checks each;
 * test/architecture/provider-payload-fields.test.ts fails when src/ reads a payload field that
 * is not listed here.
 */
export interface ProviderPayloadField {
  /** The models whose payload carries it (as stored by the provider). */
  models: readonly string[];
  /** Its JSON type there. */
  type: 'string' | 'number' | 'object';
  /** Members under it we read, as dotted paths (`login.accountId`). */
  paths?: readonly string[];
  /** Only on some rows of those models (a DPoP-bound token, an interaction once finished). */
  optional?: boolean;
  /** Who relies on it, and for what. */
  readBy: readonly string[];
}

export const PROVIDER_PAYLOAD_FIELDS = {
  clientId: {
    models: ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials'],
    type: 'string',
    readBy: [
      "gateway/auth/credential-repository.ts: the token's client, joined to oauth_clients",
      'authorizations/revoked-tokens-repository.ts: the client a revocation marker names',
    ],
  },
  accountId: {
    models: ['Session', 'AccessToken', 'RefreshToken', 'AuthorizationCode'],
    type: 'string',
    readBy: [
      'authorizations/sessions-repository.ts: every session of a user (ending their sign-ins)',
      "oidc/request-state-repository.ts: the user of the request's session",
    ],
  },
  authorizations: {
    models: ['Session'],
    type: 'object',
    paths: ['*.grantId'],
    // Once the session has authorized a client.
    optional: true,
    readBy: ['authorizations/sessions-repository.ts: a revoked grant is dropped from the sessions that name it (jsonb_set)'],
  },
  exp: {
    models: ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials', 'Session', 'Grant', 'Interaction'],
    type: 'number',
    readBy: [
      "db/provider-store.ts: setModelExpiry moves a sliding refresh token's (jsonb_set)",
      'gateway/auth/validate-credential.ts, validate-client-token.ts: whether a token is still valid',
    ],
  },
  uid: {
    // An Interaction's uid is its id, which the stored payload does not repeat.
    models: ['Session'],
    type: 'string',
    readBy: ['oidc/adapter.ts: the uid column (Session by uid)', "oidc/request-state-repository.ts: a session's record"],
  },
  grantId: {
    models: ['AccessToken', 'RefreshToken', 'AuthorizationCode'],
    type: 'string',
    readBy: ["oidc/adapter.ts: the grant_id column (a grant's tokens, revocation by grant)"],
  },
  kind: {
    models: ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials'],
    type: 'string',
    readBy: ['gateway/auth/validate-credential.ts, validate-client-token.ts: an access token is not another kind'],
  },
  scope: {
    models: ['AccessToken', 'RefreshToken', 'AuthorizationCode'],
    type: 'string',
    readBy: ['gateway/auth/validate-credential.ts: the scopes the token was granted'],
  },
  jkt: {
    models: ['AccessToken', 'RefreshToken', 'ClientCredentials'],
    type: 'string',
    optional: true,
    readBy: ['gateway/auth/dpop-proof.ts: the key a DPoP-bound token is bound to'],
  },
  session: {
    models: ['Interaction'],
    type: 'object',
    paths: ['uid'],
    optional: true,
    readBy: ['oidc/request-state-repository.ts, unit-of-work.ts: the session an interaction belongs to'],
  },
  result: {
    models: ['Interaction'],
    type: 'object',
    paths: ['login.accountId', 'login.epoch', 'consent.grantId'],
    optional: true,
    readBy: ['oidc/request-state-repository.ts, unit-of-work.ts: the sign-in and consent an interaction finished with'],
  },
} as const satisfies Record<string, ProviderPayloadField>;

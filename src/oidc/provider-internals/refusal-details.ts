import { errors } from 'oidc-provider';

/**
 * The library's reasons for an invalid_grant, as it words them in `error_detail` (the public
 * description is always "grant request is invalid"). grant-refusals.ts turns each into a sentence
 * that says why; a reworded one would silently fall back to the generic answer. Each is
 * matched verbatim in the library's source by test/oidc/provider-internals.test.ts ("invalid_grant
 * reasons: the library still words each error_detail so"); the file is where it is raised.
 */
export const GRANT_ERROR_DETAILS = {
  codeNotFound: 'authorization code not found', // helpers/grant_source.js
  refreshNotFound: 'refresh token not found', // actions/grants/refresh_token.js
  codeExpired: 'authorization code is expired', // helpers/grant_source.js
  codeConsumed: 'authorization code already consumed', // helpers/grant_source.js
  codeUsed: 'authorization code already used', // adapter.ts's own (alreadyUsed), as the library would word it
  refreshUsed: 'refresh token already used', // adapter.ts's own (alreadyUsed)
  verifierMismatch: 'code_verifier does not match code_challenge', // helpers/pkce.js
  redirectMismatch: 'authorization code redirect_uri mismatch', // actions/grants/authorization_code.js
  clientMismatch: 'client mismatch', // helpers/grant_source.js, actions/grants/refresh_token.js
  refreshExpired: 'refresh token is expired', // actions/grants/refresh_token.js
  grantNotFound: 'grant not found', // helpers/grant_source.js, actions/grants/refresh_token.js
  grantExpired: 'grant is expired', // helpers/grant_source.js, actions/grants/refresh_token.js
  proofMissing: 'DPoP proof JWT not provided', // actions/grants/refresh_token.js, authorization_code.js
  proofReplayed: 'DPoP proof JWT Replay detected', // helpers/validate_dpop.js
  jktMismatch: 'failed jkt verification', // actions/grants/refresh_token.js
  dpopJktMismatch: 'DPoP proof key thumbprint does not match dpop_jkt', // actions/grants/authorization_code.js
  /** The ending of findAccount's refusal (helpers/grant_common.js: `${entityLabel} invalid (referenced account not found)`). */
  accountMissingSuffix: '(referenced account not found)',
} as const;

/**
 * invalid_client (401) whose description says which rule a client assertion broke: the
 * library's InvalidClientAuth always sets "client authentication failed" as a class field
 * (lib/helpers/errors.js), so the description is set again after it, and the error_handler
 * renders `error_description` as it finds it. Tripwire: test/oidc/provider-internals.test.ts
 * ("InvalidClientAuth: a subclass may set its own error_description").
 */
export class DescribedClientAuthRefusal extends errors.InvalidClientAuth {
  constructor(description: string) {
    super(description);
    this.error_description = description;
  }
}

/**
 * A DPoP proof refused at UserInfo before the provider: 401, as the library answers its own
 * proof refusals there (lib/shared/set_www_authenticate_header.js sets `err.status =
 * err.statusCode = 401` for InvalidDpopProof). Tripwire: test/oidc/provider-internals.test.ts
 * ("UserInfo's proof refusals: the library answers InvalidDpopProof with 401").
 */
export function asUserinfoProofRefusal(error: InstanceType<typeof errors.InvalidDpopProof>): void {
  error.status = error.statusCode = 401;
}

/**
 * A refusal the library announced, as it rendered it (lib/helpers/err_out.js): an exposed error
 * is its `message` and `error_description`; any other is server_error with the library's fixed
 * description. middleware/oauth-errors.ts keeps it as the request's refusal, so what we add to the
 * answer is built from what the client was told. Tripwire: test/oidc/provider-internals.test.ts
 * ("refusals as rendered: err_out.js answers an unexposed error as server_error").
 */
export function renderedRefusal(error: { expose?: boolean; message?: string; error_description?: string; statusCode?: number }): {
  error: string;
  error_description?: string;
  statusCode?: number;
} {
  return error.expose
    ? { error: String(error.message), error_description: error.error_description, statusCode: error.statusCode }
    : { error: 'server_error', error_description: 'oops! something went wrong', statusCode: error.statusCode ?? 500 };
}

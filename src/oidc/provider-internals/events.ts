import type Provider from 'oidc-provider';

/**
 * The names of the events the provider's routes announce their refusals with: each route's
 * `error('<name>.error')` in lib/helpers/initialize_app.js, and authorization.error from
 * lib/shared/authorization_error_handler.js. We listen to the ones of the routes we enable
 * (middleware/oauth-errors.ts, recordRefusals); the others belong to features that stay off
 * (configuration.ts). Tripwire: test/oidc/provider-internals.test.ts ("the refusal events:
 * the library announces exactly these *.error names"), which fails on a new or renamed one.
 */
export const REFUSAL_EVENTS = [
  'grant.error',
  'introspection.error',
  'revocation.error',
  'userinfo.error',
  'pushed_authorization_request.error',
  'authorization.error',
  'end_session.error',
  'end_session_confirm.error',
  'end_session_success.error',
  'discovery.error',
  'jwks.error',
] as const;

/** The refusal events of the routes of features we leave off: nothing of ours hears them. */
export const UNUSED_REFUSAL_EVENTS = [
  'openid_credential_issuer.error',
  'credential.error',
  'challenge.error',
  'registration_create.error',
  'registration_read.error',
  'registration_update.error',
  'registration_delete.error',
  'device_authorization.error',
  'code_verification.error',
  'device_resume.error',
  'backchannel_authentication.error',
] as const;

/**
 * server_error: what the library's error handlers (lib/shared/error_handler.js,
 * authorization_error_handler.js) announce for a 500, as `(ctx, error)`. We announce our own
 * storage failures with it too (stack/provider-stack.ts), so one listener
 * (middleware/database-outage.ts) answers both. 'error' is the provider's Koa app's own event
 * (what escapes our middleware around its routes), `(error, ctx)`. Tripwire:
 * test/oidc/provider-internals.test.ts ("server_error: the library's error handlers emit it with (ctx, error)").
 */
export const SERVER_ERROR_EVENT = 'server_error';
export const APP_ERROR_EVENT = 'error';

type Listener = (...args: never[]) => void;

/** Listens to one of the events above (the library's typings list only the documented ones). */
export function onProviderEvent(
  provider: Provider,
  event: (typeof REFUSAL_EVENTS)[number] | typeof SERVER_ERROR_EVENT | typeof APP_ERROR_EVENT,
  listener: Listener,
): void {
  (provider as unknown as NodeJS.EventEmitter).on(event, listener as (...args: unknown[]) => void);
}

/** Announces a storage failure of ours as the library announces its own (server_error). */
export function emitServerError(provider: Provider, ctx: unknown, error: unknown): void {
  (provider as unknown as NodeJS.EventEmitter).emit(SERVER_ERROR_EVENT, ctx, error);
}

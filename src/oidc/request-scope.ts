import type { IncomingMessage } from 'node:http';
import type { AuthorizationContext } from '../authorizations/authorizations.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * Everything one request of the OAuth side keeps between our middleware, the provider's
 * hooks and its event listeners: one typed object at `ctx.state.oidc`, declared here and
 * nowhere else. The provider passes its Koa context to every hook and event, so each reader
 * finds the request's state there; there is no other channel.
 */
export interface OidcRequestState {
  /** The request's unit of work (unit-of-work.ts), for the requests that have one. */
  unit?: UnitOfWork;
  /** Work started from a provider event that the answer waits for (middleware/response-work.ts). */
  pendingWork?: Promise<void>[];
  /** Why the provider's storage failed, when it did (middleware/database-outage.ts). */
  storageFailure?: 'unavailable' | 'bad_input';
  /** Answering /.well-known/oauth-authorization-server through the discovery route (middleware/discovery.ts). */
  oauthMetadata?: boolean;
  /** A form body read before the provider (middleware/raw-form.ts): its text, and the request that carried it. */
  form?: { text: string; original: IncomingMessage };
  /** The library's reason for an invalid_grant (grant-refusals.ts). */
  grantRefusal?: string;
  /** The authenticated client whose refresh lost the race to consume its token (middleware/refresh-grace.ts). */
  lostRefreshRaceClient?: string;
  /** The authorization findAccount read for a token request (account.ts), reused by the token response. */
  authorization?: AuthorizationContext;
}

declare module 'koa' {
  // Declaration merging needs an interface; it adds the OAuth side's state to ctx.state.
  interface DefaultState {
    oidc?: OidcRequestState;
  }
}

/** The request's OAuth state, created on first use. Takes any context (the provider's hooks type theirs loosely). */
export function oidcState(ctx: { state?: unknown } | undefined): OidcRequestState {
  const state = (ctx?.state ?? {}) as { oidc?: OidcRequestState };
  return (state.oidc ??= {});
}

/** The request's unit of work, if it has one. */
export function unitOf(ctx: { state?: unknown } | undefined): UnitOfWork | undefined {
  return (ctx?.state as { oidc?: OidcRequestState } | undefined)?.oidc?.unit;
}

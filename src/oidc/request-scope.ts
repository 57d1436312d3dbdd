import type { IncomingMessage } from 'node:http';
import type { AuthorizationContext } from '../authorizations/authorizations.js';
import type { OAuthRefusal, StorageFailure } from '../http/oauth-problem.js';
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
  storageFailure?: StorageFailure;
  /** Answering /.well-known/oauth-authorization-server through the discovery route (middleware/discovery.ts). */
  oauthMetadata?: boolean;
  /**
   * A form body read before the provider (middleware/raw-form.ts): its parameters, which every
   * step of the token endpoint reads from here, their text as the provider will read it, and the
   * request that carried it.
   */
  form?: { params: FormParams; text: string; original: IncomingMessage };
  /**
   * The OAuth error the request is answered with: the error object as raised (the provider's,
   * heard through its `*.error` events; ours), then as the token endpoint mapped it
   * (http/oauth-problem.ts). The challenge of a 401 is built from it, never from the body.
   */
  refusal?: OAuthRefusal;
  /** An endpoint where the client authenticates (token, introspection, revocation, pushed requests): its 401 carries a Basic challenge (middleware/challenge.ts). */
  clientAuthenticates?: boolean;
  /** The library's reason for an invalid_grant (grant-refusals.ts). */
  grantRefusal?: string;
  /** The authenticated client whose refresh lost the race to consume its token (middleware/refresh-grace.ts). */
  lostRefreshRaceClient?: string;
  /** The authorization findAccount read for a token request (account.ts), reused by the token response. */
  authorization?: AuthorizationContext;
}

/** Parameters of a form body (node:querystring's shape). */
export type FormParams = Record<string, string | string[] | undefined>;

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

/**
 * Work started from a provider event (which the library does not await) that the answer
 * must not overtake: when a replayed refresh token gets its 401, the authorization it
 * belonged to is already marked revoked and gone from every session. The work must catch
 * its own errors; a failure is logged by its owner and never turns the answer into a 500.
 * The outermost middleware (middleware/response-work.ts) waits for it.
 */
export function finishBeforeResponse(ctx: { state?: unknown } | undefined, work: Promise<void>): void {
  if (!ctx?.state) return;
  (oidcState(ctx).pendingWork ??= []).push(work);
}

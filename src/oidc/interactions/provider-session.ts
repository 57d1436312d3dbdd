import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { destroySessionByUid } from '../../authorizations/sessions-repository.js';
import * as lifecycle from '../../identity/session-lifecycle.js';
import type { SignInProof } from '../../identity/sessions.js';
import type { AuthenticationMethod } from '../../accounts/authentication-methods.js';
import { providerCookieOptions } from '../configuration.js';
import { providerSessionStore, unbindInteractionSession, type ProviderSession } from '../provider-internals.js';

/**
 * The hosted pages outside the authorization flow (connections, logout, the dashboard) share
 * the provider's browser session: one sign-in serves both, and signing out ends both. What a
 * sign-in, step-up and sign-out do is identity's (identity/session-lifecycle.ts); this binds it
 * to the provider's session store (provider-internals.ts, providerSessionStore).
 */

export interface SessionDeps {
  db: Db;
  environment: Environment;
  /** The dashboard origin of this environment (decides the Secure attribute). */
  origin: string;
  provider: () => Provider;
}

function lifecycleDeps(deps: SessionDeps) {
  const options = providerCookieOptions(deps.origin);
  return {
    db: deps.db,
    environment: deps.environment,
    store: providerSessionStore(deps.provider(), { secure: options.secure, options }),
  };
}

/** The signed-in provider session of this request, if there is one. */
export function signedInSession(deps: SessionDeps, ctx: Context) {
  return lifecycle.signedInSession(lifecycleDeps(deps), ctx);
}

/** Signs a user in with `proof` in a brand-new session (identity/session-lifecycle.ts). */
export function startSession(deps: SessionDeps, ctx: Context, proof: SignInProof): Promise<void> {
  return lifecycle.startSession(lifecycleDeps(deps), ctx, proof);
}

/** A second factor proven outside the flow raises the session's acr (identity/session-lifecycle.ts). */
export function stepUpSession(deps: SessionDeps, session: ProviderSession, method: AuthenticationMethod): Promise<void> {
  return lifecycle.stepUpSession(deps, session as ProviderSession & lifecycle.StoredSession, method);
}

/** Ends the session (its row, its record and its cookie). Tokens already issued are not affected. */
export function endSession(deps: SessionDeps, ctx: Context, session: ProviderSession): Promise<void> {
  return lifecycle.endSession(lifecycleDeps(deps), ctx, session as ProviderSession & lifecycle.StoredSession);
}

/**
 * A different user signs in during an authorization whose interaction is bound to another
 * user's session. The library would answer that with its logout confirmation, which is
 * disabled here, so the old session is ended and the interaction unbound from it: the
 * library then signs the new user into a fresh session when the flow resumes.
 */
export async function detachFromSession(
  deps: SessionDeps,
  interaction: { session?: { uid?: string }; exp: number; save(ttl: number): Promise<string> },
): Promise<void> {
  const uid = interaction.session?.uid;
  if (!uid) return;
  await destroySessionByUid(deps.db, deps.environment, uid);
  await unbindInteractionSession(interaction);
}

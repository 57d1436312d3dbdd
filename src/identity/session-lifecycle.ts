import type { Context } from 'koa';
import { acrFor, type AuthenticationMethod } from '../accounts/authentication-methods.js';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { deleteBrowserSessionByUid, markFactorProved } from './browser-sessions-repository.js';
import { recordSignIn, SESSION_SECONDS, type SignInProof } from './sessions.js';

/**
 * What a sign-in, a step-up and a sign-out outside the authorization flow do to the browser's
 * session, in order, with the session's record (docs/accounts.md, "Sessions"). The session
 * itself is the authorization server's (one sign-in serves the flow and the dashboard), kept
 * through a SessionStore the caller hands in (oidc/provider-internals.ts implements it over
 * oidc-provider's Session and cookie), so this module knows nothing of the provider.
 */

/** A browser session as its store keeps it. */
export interface StoredSession {
  readonly uid: string;
  readonly accountId?: string;
  /** How it was signed in and stepped up; its `acr` follows from it. */
  amr?: AuthenticationMethod[];
  acr?: string;
  /** When it ends (epoch seconds). */
  exp?: number;
  save(ttlSeconds: number): Promise<unknown>;
  destroy(): Promise<unknown>;
}

/** Where browser sessions live and how a browser names its own (its cookie). */
export interface SessionStore<S extends StoredSession = StoredSession> {
  /** The stored session the request's cookie names, signed in or not; undefined when there is none. */
  find(ctx: Context): Promise<S | undefined>;
  /** A brand-new session (new id, new uid) signed in as `login`, not saved yet. */
  create(login: { accountId: string; amr: AuthenticationMethod[]; acr: string; loginTs: number }): S;
  /** Points the browser's cookie at `session` for `maxAgeSeconds` (after it was saved), or clears it (null). */
  setCookie(ctx: Context, session: S | null, maxAgeSeconds?: number): void;
}

export interface SessionLifecycleDeps<S extends StoredSession> {
  db: Db;
  environment: Environment;
  store: SessionStore<S>;
}

/** The signed-in session of this request, if there is one. */
export async function signedInSession<S extends StoredSession>(
  deps: SessionLifecycleDeps<S>,
  ctx: Context,
): Promise<(S & { accountId: string }) | undefined> {
  const session = await deps.store.find(ctx);
  return session?.accountId ? (session as S & { accountId: string }) : undefined;
}

/** Where the request comes from, for the session's record (the Security page's list). */
const placeOf = (ctx: Context) => ({ ip: (ctx.state.clientIp as string | undefined) ?? null, userAgent: ctx.get('user-agent') || null });

/**
 * Signs a user in with `proof` (sessions.ts): a brand-new session (new id, new uid) replaces
 * whatever the cookie named, so a session id planted before sign-in is worth nothing after it.
 * `amr` says how (the session's `acr` follows from it); an authorization that uses the session
 * carries both into its ID token. The session's record, written before the session, binds it
 * to the credentials epoch the proof was made under.
 */
export async function startSession<S extends StoredSession>(
  deps: SessionLifecycleDeps<S>,
  ctx: Context,
  proof: SignInProof,
): Promise<void> {
  const previous = await deps.store.find(ctx);
  if (previous) {
    await previous.destroy();
    await deleteBrowserSessionByUid(deps.db, deps.environment, previous.uid);
  }
  const session = deps.store.create({
    accountId: proof.userId,
    amr: proof.amr,
    acr: acrFor(proof.amr),
    loginTs: Math.floor(proof.at.getTime() / 1000),
  });
  await recordSignIn(deps.db, deps.environment, session.uid, proof, placeOf(ctx));
  await session.save(SESSION_SECONDS);
  deps.store.setCookie(ctx, session, SESSION_SECONDS);
}

/**
 * The signed-in user has just proven a second factor outside the authorization flow (the
 * dashboard's "Confirm it is you"): a step-up, as in the flow. The session records the method,
 * so its `acr` rises for the rest of its life, and when it proved a factor (factor changes need
 * a recent proof). The cookie and the session's id stay as they are. Setting up a factor is
 * not a proof of this kind and never comes here (docs/accounts.md, "Second factors").
 */
export async function stepUpSession(
  deps: { db: Db; environment: Environment },
  session: StoredSession,
  method: AuthenticationMethod,
): Promise<void> {
  const amr = [...new Set([...(session.amr ?? ['pwd' as const]), method])];
  session.amr = amr;
  session.acr = acrFor(amr);
  const now = Math.floor(Date.now() / 1000);
  await session.save(Math.max(1, (session.exp ?? now + SESSION_SECONDS) - now));
  await markFactorProved(deps.db, deps.environment, session.uid, amr);
}

/** Ends the session (its row, its record and its cookie). Tokens already issued are not affected. */
export async function endSession<S extends StoredSession>(deps: SessionLifecycleDeps<S>, ctx: Context, session: S): Promise<void> {
  await session.destroy();
  await deleteBrowserSessionByUid(deps.db, deps.environment, session.uid);
  deps.store.setCookie(ctx, null);
}

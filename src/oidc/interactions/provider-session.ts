import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { destroySessionByUid } from '../../authorizations/sessions-repository.js';
import { deleteBrowserSessionByUid, markFactorProved } from '../../identity/browser-sessions-repository.js';
import { recordSignIn, type SignInProof } from '../../identity/sessions.js';
import { providerCookieOptions } from '../configuration.js';
import { SESSION_TTL } from '../lifetimes.js';
import { acrFor, type AuthenticationMethod } from '../../accounts/authentication-methods.js';

/**
 * The hosted pages outside the authorization flow (connections, logout) share the
 * provider's browser session: one sign-in serves both, and signing out ends both. These
 * helpers use only the provider's public model API (Session.get/save/destroy, cookieName)
 * and its cookie settings, so the cookie is the same one the provider reads and rotates.
 */

type ProviderSession = Awaited<ReturnType<Provider['Session']['get']>>;

export interface SessionDeps {
  db: Db;
  environment: Environment;
  /** The dashboard origin of this environment (decides the Secure attribute). */
  origin: string;
  provider: () => Provider;
}

function cookieJar(deps: SessionDeps, ctx: Context) {
  const cookies = deps.provider().createContext(ctx.req, ctx.res).cookies as unknown as {
    secure: boolean;
    set(name: string, value: string | null, options: object): void;
  };
  // The provider's own routes get a trusted X-Forwarded-Proto from our mount; here the
  // configured origin decides, so a Secure cookie is never refused or downgraded.
  cookies.secure = deps.origin.startsWith('https:');
  return cookies;
}

/** The signed-in provider session of this request, if there is one. */
export async function signedInSession(deps: SessionDeps, ctx: Context): Promise<(ProviderSession & { accountId: string }) | undefined> {
  const session = await deps.provider().Session.get(ctx);
  return session.accountId ? (session as ProviderSession & { accountId: string }) : undefined;
}

/** Where the request comes from, for the session's record (the Security page's list). */
const placeOf = (ctx: Context) => ({ ip: ctx.state.clientIp ?? null, userAgent: ctx.get('user-agent') || null });

/**
 * Signs a user in with `proof` (identity/sessions.ts): a brand-new session (new id, new uid)
 * replaces whatever the cookie named, so a session id planted before sign-in is worth nothing
 * after it. `amr` says how (the session's `acr` follows from it); an authorization that uses
 * the session carries both into its ID token. The session's record binds it to the
 * credentials epoch the proof was made under.
 */
export async function startSession(deps: SessionDeps, ctx: Context, proof: SignInProof): Promise<void> {
  const provider = deps.provider();
  const previous = await provider.Session.get(ctx);
  if (!(previous as { new?: boolean }).new) {
    await previous.destroy();
    await deleteBrowserSessionByUid(deps.db, deps.environment, previous.uid);
  }
  const session = new provider.Session();
  session.loginAccount({ accountId: proof.userId, amr: proof.amr, acr: acrFor(proof.amr), loginTs: Math.floor(proof.at.getTime() / 1000) });
  await recordSignIn(deps.db, deps.environment, session.uid, proof, placeOf(ctx));
  await session.save(SESSION_TTL);
  cookieJar(deps, ctx).set(provider.cookieName('session'), session.jti, {
    ...providerCookieOptions(deps.origin),
    maxAge: SESSION_TTL * 1000,
  });
}

/**
 * The signed-in user has just proven a second factor outside the authorization flow (the
 * dashboard's "Confirm it is you"): a step-up, as in the flow. The session records the method,
 * so its `acr` rises for the rest of its life, and when it proved a factor (factor changes need
 * a recent proof). The cookie and the session's id stay as they are. Setting up a factor is
 * not a proof of this kind and never comes here (docs/accounts.md, "Second factors").
 */
export async function stepUpSession(deps: SessionDeps, session: ProviderSession, method: AuthenticationMethod): Promise<void> {
  const s = session as ProviderSession & { amr?: AuthenticationMethod[]; acr?: string; exp?: number };
  const amr = [...new Set([...(s.amr ?? ['pwd']), method])];
  s.amr = amr;
  s.acr = acrFor(amr);
  await session.save(Math.max(1, (s.exp ?? Math.floor(Date.now() / 1000) + SESSION_TTL) - Math.floor(Date.now() / 1000)));
  await markFactorProved(deps.db, deps.environment, session.uid, amr);
}

/** Ends the session (its row, its record and its cookie). Tokens already issued are not affected. */
export async function endSession(deps: SessionDeps, ctx: Context, session: ProviderSession): Promise<void> {
  await session.destroy();
  await deleteBrowserSessionByUid(deps.db, deps.environment, session.uid);
  cookieJar(deps, ctx).set(deps.provider().cookieName('session'), null, { ...providerCookieOptions(deps.origin) });
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
  interaction.session = undefined;
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
}

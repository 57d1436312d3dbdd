import { acrFor, hasSecondFactor, type AuthenticationMethod } from '../accounts/authentication-methods.js';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { credentialsEpoch, findSessionUser, recordBrowserSession, type SessionUser } from './browser-sessions-repository.js';

/**
 * Browser sessions and the sign-ins that start them (docs/accounts.md, "Sessions"). A sign-in
 * is a proof: who, by which methods (`amr`), when, and under which credentials epoch of the
 * user. Whatever carries a proof until it becomes a session (the interaction's login result, a
 * pending second-factor cookie) and the session it becomes are bound to that epoch, so a
 * password reset, a password change, a second factor removed or reset and a disabled account
 * end them all where they are next used.
 */

/** A factor change (add, replace, remove, new recovery codes) needs a second factor proven this recently. */
export const RECENT_PROOF_SECONDS = 600;

/** The session's lifetime, as the provider's Session TTL. */
export const SESSION_SECONDS = 14 * 86_400;

export interface SignInProof {
  userId: string;
  /** The user's credentials epoch as read with the credentials that were checked. */
  epoch: number;
  amr: AuthenticationMethod[];
  /** When the last method was proven. */
  at: Date;
}

/** Where the browser signed in from, for the Security page's list. */
export interface SignInPlace {
  ip: string | null;
  userAgent: string | null;
}

/** The user row a proof is made from: who, at which epoch. */
export function proofFor(user: { id: string; credentials_epoch: number }, amr: AuthenticationMethod[]): SignInProof {
  return { userId: user.id, epoch: user.credentials_epoch, amr, at: new Date() };
}

/**
 * The proof of a passkey sign-in, which is its own proof whenever the passkey was made: the
 * epoch is the one current once it was checked (-1 when the user is gone meanwhile).
 */
export async function passkeyProof(db: Executor, userId: string, method: AuthenticationMethod): Promise<SignInProof> {
  return { userId, epoch: (await credentialsEpoch(db, userId)) ?? -1, amr: [method], at: new Date() };
}

/**
 * What the authorization flow hands the provider once the user proved who they are (an
 * interaction's login result): the provider's own fields, plus the epoch the provider ignores
 * and the first read of the request checks (oidc/request-state-repository.ts) before the
 * result is used.
 */
export function loginResult(proof: SignInProof) {
  return { accountId: proof.userId, amr: proof.amr, acr: acrFor(proof.amr), ts: Math.floor(proof.at.getTime() / 1000), epoch: proof.epoch };
}

/** The proof a login result carries (undefined when it is not one of ours). */
export function proofOfLoginResult(login: unknown): SignInProof | undefined {
  const l = login as { accountId?: unknown; amr?: unknown; ts?: unknown; epoch?: unknown } | undefined;
  if (!l || typeof l.accountId !== 'string' || typeof l.epoch !== 'number' || typeof l.ts !== 'number' || !Array.isArray(l.amr))
    return undefined;
  return { userId: l.accountId, epoch: l.epoch, amr: l.amr as AuthenticationMethod[], at: new Date(l.ts * 1000) };
}

/** Records that a browser session was signed in (or signed in again, or stepped up) with `proof`. */
export async function recordSignIn(
  db: Executor,
  environment: Environment,
  sessionUid: string,
  proof: SignInProof,
  place: SignInPlace,
): Promise<void> {
  await recordBrowserSession(db, {
    environment,
    sessionUid,
    userId: proof.userId,
    epoch: proof.epoch,
    amr: proof.amr,
    signedInAt: proof.at,
    factorProvedAt: hasSecondFactor(proof.amr) ? proof.at : null,
    ip: place.ip || null,
    userAgent: place.userAgent ? place.userAgent.slice(0, 512) : null,
    expiresAt: new Date(Date.now() + SESSION_SECONDS * 1000),
  });
}

/** The user of a provider session while the session counts (its record at the user's current epoch, the user enabled). */
export async function liveSessionUser(
  db: Executor,
  environment: Environment,
  session: { uid: string; accountId: string },
): Promise<SessionUser | undefined> {
  const user = await findSessionUser(db, environment, session.uid, session.accountId);
  return user && !user.disabled_at ? user : undefined;
}

/** True when the session proved a second factor in the last RECENT_PROOF_SECONDS. */
export function provedFactorRecently(factorProvedAt: Date | null, now = Date.now()): boolean {
  return factorProvedAt !== null && now - factorProvedAt.getTime() <= RECENT_PROOF_SECONDS * 1000;
}

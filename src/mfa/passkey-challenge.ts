import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { WebauthnChallengesTable } from '../db/schema-identity.js';
import { rateLimited } from '../errors/domain-error.js';
import { addressKey } from '../http/client-address.js';
import { pageCookie } from '../http/page-cookie.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import { passkeySignInsStartedPerCallerAddress } from '../limits/rate-limits.js';
import { deleteSomeExpiredChallenges, saveChallenge, takeChallenge } from './passkey-repository.js';

/**
 * The challenge a passkey signs (docs/security.md, "Passkeys"): made when the browser asks
 * for options, stored for 5 minutes under the SHA-256 of a random HttpOnly cookie, and
 * deleted as the answer is read. An answer works once, and only from the browser that asked.
 */

const CHALLENGE_SECONDS = 300;

/** Expired challenges deleted by each new passwordless one, so rows do not wait for the sweep. */
const CLEANUP_BATCH = 100;

export interface ChallengeDeps {
  db: Db;
  counter: AttemptCounter;
  environment: Environment;
  origin: string;
}

type Purpose = WebauthnChallengesTable['purpose'];

const cookie = (deps: ChallengeDeps, ctx: Context) => pageCookie(deps, ctx, 'passkey', 'strict');

const NONCE = /^[A-Za-z0-9_-]{43}$/;
const keyOf = (nonce: string) => crypto.createHash('sha256').update(nonce).digest('hex');

/**
 * Stores `challenge` for this browser (replacing any earlier one) for `purpose`, tied to
 * `userId` when known. One for nobody yet (a passwordless sign-in) is counted against the
 * caller's address first (429 past passkeySignInsStartedPerCallerAddress, nothing written), and clears away
 * expired challenges. Those made for a user need their password or session first.
 */
export async function rememberChallenge(
  deps: ChallengeDeps,
  ctx: Context,
  purpose: Purpose,
  challenge: string,
  userId: string | null,
): Promise<void> {
  if (userId === null) {
    const decision = await deps.counter.take(passkeySignInsStartedPerCallerAddress, addressKey(ctx.state.clientIp ?? ''));
    if (!decision.allowed) {
      const minutes = Math.ceil(decision.retryAfterSeconds / 60);
      throw rateLimited(
        `Too many passkey sign-ins were started from your network and not finished. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}, or sign in with your e-mail address and password.`,
        decision.retryAfterSeconds,
        { title: 'Too many passkey sign-ins' },
      );
    }
    await deleteSomeExpiredChallenges(deps.db, CLEANUP_BATCH);
  }
  const current = cookie(deps, ctx).get();
  const nonce = current && NONCE.test(current) ? current : crypto.randomBytes(32).toString('base64url');
  await saveChallenge(deps.db, { id: keyOf(nonce), challenge, purpose, user_id: userId }, CHALLENGE_SECONDS);
  cookie(deps, ctx).set(nonce, CHALLENGE_SECONDS * 1000);
}

/** A challenge taken to check the answer to it. */
export interface TakenChallenge {
  challenge: string;
  /** The user it was made for; null for a passwordless sign-in (anybody's passkey). */
  user_id: string | null;
  /** The caller address the answer came from: a passwordless answer's failures count against it. */
  from: string;
}

/** This browser's unexpired challenge for `purpose`, taken (it cannot be taken again), or undefined. */
export async function takeBrowserChallenge(deps: ChallengeDeps, ctx: Context, purpose: Purpose): Promise<TakenChallenge | undefined> {
  const nonce = cookie(deps, ctx).get();
  cookie(deps, ctx).clear();
  if (!nonce || !NONCE.test(nonce)) return undefined;
  const taken = await takeChallenge(deps.db, keyOf(nonce), purpose);
  return taken && { ...taken, from: ctx.state.clientIp ?? '' };
}

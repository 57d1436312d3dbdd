import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { WebauthnChallengesTable } from '../db/schema-identity.js';
import { pageCookie } from '../http/page-cookie.js';
import { saveChallenge, takeChallenge } from './passkey-repository.js';

/**
 * The challenge a passkey signs (docs/security.md, "Passkeys"): made when the browser asks
 * for options, stored for 5 minutes under the SHA-256 of a random HttpOnly cookie, and
 * deleted as the answer is read. An answer works once, and only from the browser that asked.
 */

const CHALLENGE_SECONDS = 300;

export interface ChallengeDeps {
  db: Db;
  environment: Environment;
  origin: string;
}

type Purpose = WebauthnChallengesTable['purpose'];

const cookie = (deps: ChallengeDeps, ctx: Context) => pageCookie(deps, ctx, 'passkey', 'strict');

const NONCE = /^[A-Za-z0-9_-]{43}$/;
const keyOf = (nonce: string) => crypto.createHash('sha256').update(nonce).digest('hex');

/** Stores `challenge` for this browser (replacing any earlier one) for `purpose`, tied to `userId` when known. */
export async function rememberChallenge(deps: ChallengeDeps, ctx: Context, purpose: Purpose, challenge: string, userId: string | null): Promise<void> {
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

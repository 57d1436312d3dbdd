import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { SecretBox } from '../keys/secret-box.js';
import { recordAudit } from '../audit/audit-log.js';
import { conflict } from '../errors/domain-error.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import { secondFactorFailures } from '../limits/rate-limits.js';
import type { Environment } from '../db/schema.js';
import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode } from './recovery-codes.js';
import * as repo from './repository.js';
import type { UsedCode } from './second-factor-words.js';
import { matchingTimeStep, newTotpSecret, qrSvg, totpUri } from './totp.js';

/**
 * A user's second factors (docs/oauth.md, "Second factors and step-up"): an authenticator
 * app (TOTP) with its recovery codes, and passkeys. Every code checked here is counted
 * against the user's limit first, atomically, so a burst of guesses gets no more tries than
 * a patient attacker would.
 */

export interface SecondFactorDeps {
  db: Db;
  box: SecretBox;
  counter: AttemptCounter;
  environment: Environment;
}

/** A refused code: `used` when it was right but had been used (the same attempt is counted all the same). */
export type CodeCheck = { ok: true; method: 'otp' } | { ok: false; retryAfterSeconds?: number; used?: UsedCode };

export interface TotpEnrolment {
  secret: string;
  uri: string;
  qr: string;
}

export async function secondFactorSummary(db: Db, userId: string) {
  return repo.secondFactorSummary(db, userId);
}

/** True when the user has a second factor to be asked for at sign-in. */
export async function hasEnrolledSecondFactor(db: Db, userId: string): Promise<boolean> {
  const summary = await repo.secondFactorSummary(db, userId);
  return summary.totp || summary.passkeys > 0;
}

/**
 * The secret being set up for an authenticator app: the pending one when the user already
 * began (the QR code on screen stays valid across reloads), a new one otherwise. Refused
 * when an app is already set up: it is removed first.
 */
export async function beginTotpEnrolment(
  deps: SecondFactorDeps,
  user: { id: string; email: string },
  issuer: string,
): Promise<TotpEnrolment> {
  const existing = await repo.findTotp(deps.db, user.id);
  if (existing?.confirmed_at) throw conflict('An authenticator app is already set up; remove it first to set up another.');
  let secret = existing ? deps.box.open(existing.secret) : undefined;
  if (!secret) {
    secret = newTotpSecret();
    if (!(await repo.upsertPendingTotp(deps.db, user.id, deps.box.seal(secret))))
      throw conflict('An authenticator app is already set up; remove it first to set up another.');
  }
  const uri = totpUri(secret, user.email, issuer);
  return { secret, uri, qr: qrSvg(uri) };
}

/** Takes one attempt under the user's limit; the answer when refused. */
async function takeAttempt(deps: SecondFactorDeps, userId: string) {
  return deps.counter.take(secondFactorFailures, userId);
}

/**
 * Who may add a factor (docs/accounts.md, "Second factors"): `any` once the session proved an
 * existing factor recently; `first` otherwise, which is refused when the user has a factor
 * already (checked under a lock on the user, so two additions cannot both be "the first").
 */
export type FactorAddition = 'first' | 'any';

export type TotpConfirmation =
  { ok: true; recoveryCodes?: string[] } | { ok: false; retryAfterSeconds?: number; hasFactor?: true; used?: UsedCode };

/**
 * The first code from the app confirms the setup: the app is then a second factor of the user.
 * The user's first second factor comes with a set of recovery codes (returned once, stored
 * hashed); a later one keeps the codes the user has.
 */
export async function confirmTotp(
  deps: SecondFactorDeps,
  userId: string,
  code: string,
  addition: FactorAddition,
): Promise<TotpConfirmation> {
  const attempt = await takeAttempt(deps, userId);
  if (!attempt.allowed) return { ok: false, retryAfterSeconds: attempt.retryAfterSeconds };
  const row = await repo.findTotp(deps.db, userId);
  const step = row && !row.confirmed_at ? matchingTimeStep(deps.box.open(row.secret), code.trim()) : undefined;
  if (step === undefined) return { ok: false };
  const confirmed = await inTransaction(deps.db, async (trx): Promise<TotpConfirmation> => {
    await repo.lockUserFactors(trx, userId);
    const before = await repo.secondFactorSummary(trx, userId);
    const first = !before.totp && before.passkeys === 0;
    if (!first && addition === 'first') return { ok: false, hasFactor: true };
    if (!(await repo.useTimeStep(trx, userId, step, true))) return { ok: false, used: 'app' };
    const recoveryCodes = first ? newRecoveryCodes() : undefined;
    if (recoveryCodes)
      await repo.replaceRecoveryCodes(
        trx,
        userId,
        recoveryCodes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
      );
    await recordAudit(trx, {
      event: 'second_factor.added',
      environment: deps.environment,
      actorUserId: userId,
      details: { method: 'totp' },
    });
    return { ok: true, recoveryCodes };
  });
  if (confirmed.ok) await deps.counter.succeeded(attempt.taken);
  return confirmed;
}

/**
 * A code typed at sign-in or step-up: six digits are the app's code (each time step works
 * once, and no earlier step after it), anything else is tried as a recovery code (each works
 * once).
 */
export async function checkSecondFactorCode(deps: SecondFactorDeps, userId: string, input: string): Promise<CodeCheck> {
  const attempt = await takeAttempt(deps, userId);
  if (!attempt.allowed) return { ok: false, retryAfterSeconds: attempt.retryAfterSeconds };
  const code = input.trim().replace(/\s/g, '');
  let ok = false;
  let used: UsedCode | undefined;
  if (/^\d{6}$/.test(code)) {
    const row = await repo.findTotp(deps.db, userId);
    const step = row?.confirmed_at ? matchingTimeStep(deps.box.open(row.secret), code) : undefined;
    // A code of the app's window that cannot be used is one of a step already used (or before it).
    ok = step !== undefined && (await repo.useTimeStep(deps.db, userId, step, false));
    if (step !== undefined && !ok) used = 'app';
  } else {
    const canonical = normaliseRecoveryCode(code);
    const hash = canonical === undefined ? undefined : hashRecoveryCode(canonical);
    ok = hash !== undefined && (await repo.useRecoveryCode(deps.db, userId, hash));
    if (ok) await recordAudit(deps.db, { event: 'second_factor.recovery_code_used', environment: deps.environment, actorUserId: userId });
    else if (hash !== undefined && (await repo.isUsedRecoveryCode(deps.db, userId, hash))) used = 'recovery';
  }
  if (!ok) return used ? { ok: false, used } : { ok: false };
  await deps.counter.succeeded(attempt.taken);
  return { ok: true, method: 'otp' };
}

/** A new set of recovery codes replaces the old (returned once). Needs a second factor set up. */
export async function regenerateRecoveryCodes(deps: SecondFactorDeps, userId: string): Promise<string[]> {
  if (!(await hasEnrolledSecondFactor(deps.db, userId))) throw conflict('Set up an authenticator app or a passkey first.');
  const codes = newRecoveryCodes();
  await inTransaction(deps.db, async (trx) => {
    await repo.replaceRecoveryCodes(
      trx,
      userId,
      codes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
    );
    await recordAudit(trx, { event: 'second_factor.recovery_codes_replaced', environment: deps.environment, actorUserId: userId });
  });
  return codes;
}

/**
 * Removes the authenticator app; the recovery codes go too when no passkey is left. `also` runs
 * in the same transaction when the app was removed (the caller ends the user's sign-ins).
 */
export async function removeTotp(deps: SecondFactorDeps, userId: string, also?: (trx: Executor) => Promise<void>): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    await repo.lockUserFactors(trx, userId);
    const removed = await repo.deleteTotp(trx, userId);
    if (!removed) return false;
    const summary = await repo.secondFactorSummary(trx, userId);
    if (summary.passkeys === 0) await repo.deleteRecoveryCodes(trx, userId);
    await recordAudit(trx, {
      event: 'second_factor.removed',
      environment: deps.environment,
      actorUserId: userId,
      details: { method: 'totp' },
    });
    await also?.(trx);
    return true;
  });
}

import net from 'node:net';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { invalid } from '../errors/domain-error.js';
import { addressKey } from '../http/client-address.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import {
  passkeyAnswersPerCallerAddress,
  passkeyAnswersPerCallerAddressAndPasskey,
  passkeySignInsStartedPerCallerAddress,
  secondFactorFailures,
} from '../limits/rate-limits.js';
import type { TakenChallenge } from './passkey-challenge.js';
import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode } from './recovery-codes.js';
import * as repo from './repository.js';
import * as passkeys from './passkey-repository.js';
import type { FactorAddition } from './second-factors.js';

/**
 * Passkeys (WebAuthn, through @simplewebauthn/server; docs/oauth.md, "Second factors and
 * step-up"): registered on the Security page, used as the second factor after a password,
 * and on their own for a passwordless sign-in. The relying party is the dashboard host
 * (the hosted sign-in and consent pages are on it too). Every passkey is discoverable and
 * verifies its user (PIN or biometric) when made, so each can sign in without a password.
 */

export interface PasskeyDeps {
  db: Db;
  counter: AttemptCounter;
  environment: Environment;
  /** The dashboard origin: the origin every answer must come from; its host is the RP ID unless `passkeyRpId` is set. */
  origin: string;
  /** The configured passkey_rp_id: one RP ID for both dashboards. */
  passkeyRpId?: string;
}

/** RFC 8176: a passkey that stays on one device is a hardware key; one synced between devices is a software key. */
export type PasskeyMethod = 'hwk' | 'swk';

const methodOf = (deviceType: 'singleDevice' | 'multiDevice'): PasskeyMethod => (deviceType === 'multiDevice' ? 'swk' : 'hwk');

export type PasskeyCheck = { ok: true; userId: string; method: PasskeyMethod } | { ok: false; retryAfterSeconds?: number };

export const PASSKEY_NAME_MAX = 100;

/**
 * The relying party of a dashboard: its origin, and as RP ID the configured passkey_rp_id
 * or else its host name. None when its host is an IP address: WebAuthn needs a domain name
 * (http://localhost is fine for local use).
 */
export function relyingParty(deps: { origin: string; passkeyRpId?: string }): { id: string; origin: string } | undefined {
  const { hostname, origin } = new URL(deps.origin);
  if (net.isIP(hostname.replace(/^\[|\]$/g, ''))) return undefined;
  return { id: deps.passkeyRpId ?? hostname, origin };
}

function requireRelyingParty(deps: PasskeyDeps) {
  const rp = relyingParty(deps);
  if (!rp) throw invalid('Passkeys need the dashboard at a domain name, not an IP address.');
  return rp;
}

/** A UUID as the 16 bytes WebAuthn stores as the user handle. */
const userHandle = (userId: string) => new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));

/** Every passkey of the user, each marked usable here (made for this dashboard's RP ID) or not. */
export async function listPasskeys(deps: PasskeyDeps, userId: string) {
  const rpId = relyingParty(deps)?.id;
  return (await passkeys.listPasskeys(deps.db, userId)).map((p) => ({ ...p, usableHere: p.rp_id === rpId }));
}

/** The user's passkeys this dashboard can ask for. */
async function passkeysHere(deps: PasskeyDeps, userId: string) {
  return (await listPasskeys(deps, userId)).filter((p) => p.usableHere);
}

/** How many of the user's passkeys work on this dashboard (0 when it cannot use passkeys at all). */
export async function countPasskeysHere(deps: PasskeyDeps, userId: string): Promise<number> {
  return (await passkeysHere(deps, userId)).length;
}

/** What the browser needs to make a passkey for `user` (its existing ones excluded). */
export async function registrationOptions(
  deps: PasskeyDeps,
  user: { id: string; email: string; display_name: string | null },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = requireRelyingParty(deps);
  const existing = await passkeysHere(deps, user.id);
  return generateRegistrationOptions({
    rpName: deps.environment === 'sandbox' ? 'Almoner Sandbox' : 'Almoner',
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.display_name ?? user.email,
    userID: userHandle(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

/** A name as typed, trimmed; refused when empty or too long. */
export function passkeyName(input: string | undefined): string {
  const name = (input ?? '').trim().replace(/\s+/g, ' ');
  if (!name || name.length > PASSKEY_NAME_MAX)
    throw invalid(`Give the passkey a name of 1 to ${PASSKEY_NAME_MAX} characters, such as the device it is on.`);
  return name;
}

function parseJson<T>(text: string | undefined): T | undefined {
  try {
    const value = JSON.parse(text ?? '') as unknown;
    return value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps the passkey the browser made for `challenge`. The user's first second factor comes
 * with a set of recovery codes (returned once). `addition`: see second-factors.ts.
 */
export async function registerPasskey(
  deps: PasskeyDeps,
  userId: string,
  challenge: string,
  name: string,
  responseJson: string | undefined,
  addition: FactorAddition,
): Promise<{ ok: true; method: PasskeyMethod; recoveryCodes?: string[] } | { ok: false; hasFactor?: true }> {
  const rp = requireRelyingParty(deps);
  const response = parseJson<RegistrationResponseJSON>(responseJson);
  if (!response) return { ok: false };
  let info;
  try {
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!verification.verified) return { ok: false };
    info = verification.registrationInfo;
  } catch {
    return { ok: false };
  }
  const credential = info.credential;
  return inTransaction(deps.db, async (trx) => {
    await repo.lockUserFactors(trx, userId);
    const before = await repo.secondFactorSummary(trx, userId);
    if (addition === 'first' && (before.totp || before.passkeys > 0)) return { ok: false, hasFactor: true } as const;
    const inserted = await passkeys.insertPasskey(trx, {
      id: credential.id,
      user_id: userId,
      public_key: Buffer.from(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp,
      name,
      rp_id: rp.id,
    });
    if (!inserted) return { ok: false } as const;
    let recoveryCodes: string[] | undefined;
    if (!before.totp && before.passkeys === 0) {
      recoveryCodes = newRecoveryCodes();
      await repo.replaceRecoveryCodes(
        trx,
        userId,
        recoveryCodes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
      );
    }
    await recordAudit(trx, {
      event: 'second_factor.added',
      environment: deps.environment,
      actorUserId: userId,
      details: { method: 'passkey', name },
    });
    return { ok: true, method: methodOf(info.credentialDeviceType), recoveryCodes } as const;
  });
}

/**
 * What the browser needs to sign with a passkey: one of `userId`'s (a second factor, user
 * verification preferred), or any passkey of this site (a passwordless sign-in, user
 * verification required).
 */
export async function authenticationOptions(deps: PasskeyDeps, userId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const rp = requireRelyingParty(deps);
  const allowCredentials = userId
    ? (await passkeysHere(deps, userId)).map((p) => ({ id: p.id, transports: p.transports as AuthenticatorTransport[] }))
    : [];
  return generateAuthenticationOptions({ rpID: rp.id, allowCredentials, userVerification: userId ? 'preferred' : 'required' });
}

/**
 * The limits an answer is counted under before it is checked. A passwordless answer: its
 * caller's address, and that address with the credential it names. An answer made for a user
 * (the second-factor step, after the password; a step-up): that user's second-factor limit,
 * shared with codes, and only when the credential is theirs.
 */
function limitsOf(challenge: TakenChallenge, credentialId: string) {
  if (challenge.user_id !== null) return [{ limit: secondFactorFailures, value: challenge.user_id }];
  const address = addressKey(challenge.from);
  return [
    { limit: passkeyAnswersPerCallerAddress, value: address },
    { limit: passkeyAnswersPerCallerAddressAndPasskey, value: `${address}\0${credentialId}` },
  ];
}

/**
 * Checks a passkey's answer to `challenge` (already taken: it serves one answer). A challenge
 * made for a user is answered only by that user's passkey; one made for anybody needs user
 * verification, as the passkey is then the only factor. Counted first (limitsOf): a
 * passwordless answer before its credential is even looked up, so unknown ids count too.
 */
export async function checkPasskey(deps: PasskeyDeps, challenge: TakenChallenge, responseJson: string | undefined): Promise<PasskeyCheck> {
  const rp = requireRelyingParty(deps);
  const response = parseJson<AuthenticationResponseJSON>(responseJson);
  if (!response) return { ok: false };
  const passwordless = challenge.user_id === null;
  let attempt = passwordless ? await deps.counter.takeAll(limitsOf(challenge, response.id)) : undefined;
  if (attempt && !attempt.allowed) return { ok: false, retryAfterSeconds: attempt.retryAfterSeconds };
  const stored = await passkeys.findPasskey(deps.db, response.id);
  if (!stored || stored.rp_id !== rp.id || stored.disabled_at || (challenge.user_id && stored.user_id !== challenge.user_id))
    return { ok: false };
  attempt ??= await deps.counter.takeAll(limitsOf(challenge, stored.id));
  if (!attempt.allowed) return { ok: false, retryAfterSeconds: attempt.retryAfterSeconds };
  let info;
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: stored.id,
        publicKey: new Uint8Array(stored.public_key),
        counter: Number(stored.counter),
        transports: stored.transports as AuthenticatorTransport[],
      },
      requireUserVerification: passwordless,
    });
    if (!verification.verified) return { ok: false };
    info = verification.authenticationInfo;
  } catch {
    return { ok: false };
  }
  if (!(await passkeys.recordPasskeyUse(deps.db, stored.id, info.newCounter, info.credentialBackedUp))) return { ok: false };
  await Promise.all(attempt.taken.map((taken) => deps.counter.succeeded(taken)));
  // The options it answered no longer count against its address (passkeySignInsStartedPerCallerAddress).
  if (passwordless) await deps.counter.giveBack(passkeySignInsStartedPerCallerAddress, addressKey(challenge.from));
  return { ok: true, userId: stored.user_id, method: methodOf(stored.device_type) };
}

/**
 * Removes one of the user's passkeys; the recovery codes go too when no second factor is left.
 * Its name, when there was one. `also` runs in the same transaction when one was removed.
 */
export async function removePasskey(
  deps: PasskeyDeps,
  userId: string,
  id: string,
  also?: (trx: Executor) => Promise<void>,
): Promise<string | undefined> {
  return inTransaction(deps.db, async (trx) => {
    await repo.lockUserFactors(trx, userId);
    const name = await passkeys.deletePasskey(trx, userId, id);
    if (name === undefined) return undefined;
    const summary = await repo.secondFactorSummary(trx, userId);
    if (!summary.totp && summary.passkeys === 0) await repo.deleteRecoveryCodes(trx, userId);
    await recordAudit(trx, {
      event: 'second_factor.removed',
      environment: deps.environment,
      actorUserId: userId,
      details: { method: 'passkey', name },
    });
    await also?.(trx);
    return name;
  });
}

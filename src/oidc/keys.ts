import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment, KeyState } from '../db/schema.js';
import type { SecretBox } from '../keys/secret-box.js';
import {
  deleteRetiredKeys,
  insertSigningKey,
  listCurrentAndNextKeys,
  listKeyFingerprints,
  listKeysOf,
  listKeyStates,
  lockSigningKeys,
  promoteNextKey,
  retireCurrentKey,
} from './signing-keys-repository.js';

/**
 * Signing keys (ES256 and RS256) per environment, generated on first start and kept in the
 * database. Each algorithm has a `current` key that signs, a `next` key that is already
 * published so relying parties have it before it signs, and `previous` keys kept published
 * until what they signed has expired.
 */
export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const ENVIRONMENTS: readonly Environment[] = ['production', 'sandbox'];

/** ID tokens live an hour; a previous key stays published a while longer. */
export const PREVIOUS_KEY_RETENTION_SECONDS = 2 * 3600;

export interface SigningJwk extends Record<string, unknown> {
  kid: string;
  alg: SigningAlg;
  use: 'sig';
}

const generateKeyPair = promisify(crypto.generateKeyPair);

/** On libuv's threads: a first start generates several RSA keys at once (about 0.3 s each here). */
async function generateJwk(alg: SigningAlg): Promise<SigningJwk> {
  const { privateKey } =
    alg === 'RS256' ? await generateKeyPair('rsa', { modulusLength: 2048 }) : await generateKeyPair('ec', { namedCurve: 'P-256' });
  const kid = crypto.randomBytes(12).toString('base64url');
  return { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid, alg, use: 'sig' };
}

/** Private keys are stored sealed: {"sealed": "enc:v1:…"} (see keys/secret-box.ts). */
function sealJwk(box: SecretBox, jwk: SigningJwk): string {
  return JSON.stringify({ sealed: box.seal(JSON.stringify(jwk)) });
}

function openJwk(box: SecretBox, stored: Record<string, unknown>): SigningJwk {
  return typeof stored.sealed === 'string' ? (JSON.parse(box.open(stored.sealed)) as SigningJwk) : (stored as SigningJwk);
}

async function insertKey(db: Db, box: SecretBox, environment: Environment, alg: SigningAlg, state: KeyState): Promise<void> {
  const jwk = await generateJwk(alg);
  // The partial unique indexes make a concurrent start's insert a no-op.
  await insertSigningKey(
    db,
    { environment, kid: jwk.kid, alg, state, private_jwk: sealJwk(box, jwk), activated_at: state === 'current' ? new Date() : null },
    true,
  );
}

export async function ensureSigningKeys(db: Db, box: SecretBox): Promise<void> {
  const rows = await listCurrentAndNextKeys(db);
  const has = (environment: Environment, alg: SigningAlg, state: KeyState) =>
    rows.some((r) => r.environment === environment && r.alg === alg && r.state === state);
  const missing: Promise<void>[] = [];
  for (const environment of ENVIRONMENTS) {
    for (const alg of SIGNING_ALGS) {
      for (const state of ['current', 'next'] as const)
        if (!has(environment, alg, state)) missing.push(insertKey(db, box, environment, alg, state));
    }
  }
  await Promise.all(missing);
}

/** The provider's JWKS: current keys first (the provider signs with the first match), then next, then previous. */
export async function loadJwks(db: Db, box: SecretBox, environment: Environment): Promise<{ keys: SigningJwk[] }> {
  const rows = await listKeysOf(db, environment);
  const order: Record<KeyState, number> = { current: 0, next: 1, previous: 2 };
  const now = Date.now();
  const live = rows.filter((r) => r.state !== 'previous' || (r.retire_after && r.retire_after.getTime() > now));
  live.sort((a, b) => order[a.state] - order[b.state] || (a.alg === 'RS256' ? -1 : 1));
  return { keys: live.map((r) => openJwk(box, r.private_jwk)) };
}

/** A cheap fingerprint of the key set, so running servers notice a rotation. */
export async function keysVersion(db: Db): Promise<string> {
  const rows = await listKeyFingerprints(db);
  const now = Date.now();
  // A previous key that passes its retire_after changes the published set too.
  return rows.map((r) => `${r.kid}:${r.state}${r.retire_after && r.retire_after.getTime() <= now ? ':retired' : ''}`).join(',');
}

export interface KeyStateView {
  environment: Environment;
  kid: string;
  alg: string;
  state: KeyState;
  retire_after: string | null;
}

/**
 * next → current, current → previous (published until retire_after), a fresh next. The
 * new current key was published since the last rotation, so clients already have it.
 */
export async function rotateSigningKeys(
  db: Db,
  box: SecretBox,
  environments: readonly Environment[] = ENVIRONMENTS,
): Promise<{ kids: string[]; keys: KeyStateView[] }> {
  await ensureSigningKeys(db, box);
  const promoted: string[] = [];
  await inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    for (const environment of environments) {
      for (const alg of SIGNING_ALGS) {
        const retireAfter = new Date(Date.now() + PREVIOUS_KEY_RETENTION_SECONDS * 1000);
        await retireCurrentKey(trx, environment, alg, retireAfter);
        promoted.push(await promoteNextKey(trx, environment, alg));
        const jwk = await generateJwk(alg);
        await insertSigningKey(trx, { environment, kid: jwk.kid, alg, state: 'next', private_jwk: sealJwk(box, jwk) });
      }
    }
    // Previous keys past their retention are of no further use.
    await deleteRetiredKeys(trx);
  });
  const keys = await listKeyStates(db);
  return { kids: promoted, keys: keys.map((k) => ({ ...k, retire_after: k.retire_after?.toISOString() ?? null })) };
}

import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { SecretBox } from './secret-box.js';
import {
  deleteServerKey,
  insertServerKeys,
  listServerKeyNames,
  listServerKeyTimeline,
  listServerKeyVersions,
  lockServerKeys,
  updateServerKeyValue,
} from './server-keys-repository.js';

/**
 * The server's own symmetric keys, shared by every process through the database (sealed with
 * the secrets key) and rotated with `admin keys rotate --kind server`. Each name has versions:
 * the newest one whose `activates_at` has passed signs (or hashes); a version added by a
 * rotation is loaded by every process before it activates, and an older one keeps verifying
 * until what it signed has expired, then is ignored (and deleted by the next rotation).
 */
export const SERVER_KEY_NAMES = [
  'cookie_key:production',
  'cookie_key:sandbox',
  'csrf_key',
  'client_secret_cache_key',
  'hashing_key',
] as const;
export type ServerKeyName = (typeof SERVER_KEY_NAMES)[number];

/** How often a running process re-reads the keys (the signing-key watcher's period). */
export const KEY_POLL_SECONDS = 5;
/** A rotated version starts signing this long after the rotation: every process has polled it by then, twice. */
export const SERVER_KEY_ACTIVATION_SECONDS = 3 * KEY_POLL_SECONDS;

/** What the hashing key is used for; each purpose HMACs under its own key derived from it (HKDF). */
export type HashPurpose = 'login_throttle' | 'daf_code' | 'audit_input' | 'attempt_counter' | 'upload_url' | 'scan_image_url';

const DAY = 86_400;

/**
 * How long a version still verifies after its successor started signing: the longest life of
 * anything it signed or hashed. Past that it is ignored. The lives are the features' own
 * (named beside each); keys/ imports no feature, so test/keys/key-lifetimes.test.ts holds
 * each number to the feature's constant and fails when one changes without the other.
 */
export const VERIFIES_AFTER_RETIREMENT_SECONDS: Record<Exclude<ServerKeyName, 'hashing_key'> | HashPurpose, number> = {
  // Provider cookies: the session cookie lives as long as the session (an older cookie read
  // after the rotation is re-signed with the new key on the way out).
  'cookie_key:production': 14 * DAY, // SESSION_TTL, src/oidc/lifetimes.ts
  'cookie_key:sandbox': 14 * DAY,
  // CSRF tokens are bound to an interaction (1 h), a sign-in nonce (1 h) or a session: the session's life.
  csrf_key: 14 * DAY,
  // Cache entries of successful client-secret checks.
  client_secret_cache_key: 60, // CLIENT_SECRET_CACHE_TTL_MS, src/oidc/client-secret-cache.ts
  // A lockout and the history that lengthens the next one.
  login_throttle: DAY, // the longest historySeconds or maxLockSeconds, src/identity/login-throttle.ts
  // The longest a DAF code can be valid.
  daf_code: 90 * DAY, // MAX_TOKEN_TTL_SECONDS, src/daf/tokens-service.ts
  // An attempt counter's window (src/limits/attempt-counter.ts): a day at most.
  attempt_counter: DAY,
  // A folder storage's signed upload URL lives an hour at most.
  upload_url: 3600, // MAX_UPLOAD_URL_SECONDS, src/storage/upload-signing.ts
  // The dashboard's signed URLs of scan images.
  scan_image_url: 300, // SCAN_IMAGE_URL_TTL_SECONDS, src/dashboard/gift-image-urls.ts
  // Audit rows are kept for good, so their hashes stay checkable: hashing key versions are never deleted.
  audit_input: Number.POSITIVE_INFINITY,
};

export interface KeyVersion {
  kid: string;
  /** The key as stored (base64url of 32 random bytes); cookie signing uses this text, as keygrip did. */
  secret: string;
  /** The decoded bytes, for HMACs. */
  bytes: Buffer;
  /** The same bytes as a KeyObject: Node's HMAC takes it without checking a Buffer's kind each call. */
  key: crypto.KeyObject;
  activatesAt: number;
  /** When its successor started signing (undefined while it signs, or before it does). */
  retiredAt: number | undefined;
}

/** A version as read from the database, before the clock places it. */
type StoredVersion = Omit<KeyVersion, 'retiredAt'>;

const newKid = () => crypto.randomBytes(6).toString('hex');
const newSecret = () => crypto.randomBytes(32).toString('base64url');

function lifeAfterRetirement(name: ServerKeyName, purpose?: HashPurpose): number {
  if (name === 'hashing_key') return VERIFIES_AFTER_RETIREMENT_SECONDS[purpose ?? 'audit_input'];
  return VERIFIES_AFTER_RETIREMENT_SECONDS[name];
}

/** Creates the first version of every key that has none (first start). */
export async function ensureServerKeys(db: Db, box: SecretBox): Promise<void> {
  const present = await listServerKeyNames(db);
  if (SERVER_KEY_NAMES.every((name) => present.includes(name))) return;
  await inTransaction(db, async (trx) => {
    // One lock for creating and rotating, so concurrent first starts create one first version each.
    await lockServerKeys(trx);
    const existing = new Set(await listServerKeyNames(trx));
    const missing = SERVER_KEY_NAMES.filter((name) => !existing.has(name));
    if (missing.length === 0) return;
    // A first version signs from the start: nothing can hold an older one.
    await insertServerKeys(
      trx,
      missing.map((name) => ({ name, kid: newKid(), value: box.seal(newSecret()), activates_at: new Date(0) })),
    );
  });
}

/** Orders one name's versions and works out when each stopped signing. */
function timeline(
  rows: readonly { kid: string; activates_at: Date }[],
  now: number,
): { kid: string; activatesAt: number; retiredAt: number | undefined }[] {
  const sorted = [...rows].sort((a, b) => a.activates_at.getTime() - b.activates_at.getTime() || a.kid.localeCompare(b.kid));
  return sorted.map((row, i) => {
    const successor = sorted[i + 1]?.activates_at.getTime();
    return {
      kid: row.kid,
      activatesAt: row.activates_at.getTime(),
      retiredAt: successor !== undefined && successor <= now ? successor : undefined,
    };
  });
}

export type KeyState = 'pending' | 'current' | 'previous';
export interface ServerKeyView {
  name: ServerKeyName;
  kid: string;
  state: KeyState;
  activates_at: string;
  /** When it stops verifying (previous versions); null while it signs or will. */
  verifies_until: string | null;
}

function keyViews(name: ServerKeyName, rows: readonly { kid: string; activates_at: Date }[], now: number): ServerKeyView[] {
  const life = lifeAfterRetirement(name, name === 'hashing_key' ? 'daf_code' : undefined);
  return timeline(rows, now).map((v) => ({
    name,
    kid: v.kid,
    state: v.activatesAt > now ? 'pending' : v.retiredAt === undefined ? 'current' : 'previous',
    activates_at: new Date(v.activatesAt).toISOString(),
    verifies_until: v.retiredAt === undefined ? null : new Date(v.retiredAt + life * 1000).toISOString(),
  }));
}

export interface ServerKeyRotation {
  /** When the new versions start signing. */
  activates_at: string;
  rotated: { name: ServerKeyName; kid: string }[];
  /** Versions deleted because nothing they signed can still be valid. */
  removed: { name: ServerKeyName; kid: string }[];
  keys: ServerKeyView[];
}

/**
 * Adds a new version of every server key, signing from `now + SERVER_KEY_ACTIVATION_SECONDS`,
 * and deletes versions that have aged out (the hashing key's are kept: audit rows name them).
 */
export async function rotateServerKeys(db: Db, box: SecretBox, now = new Date()): Promise<ServerKeyRotation> {
  await ensureServerKeys(db, box);
  const activatesAt = new Date(now.getTime() + SERVER_KEY_ACTIVATION_SECONDS * 1000);
  return inTransaction(db, async (trx) => {
    await lockServerKeys(trx);
    const rotated = SERVER_KEY_NAMES.map((name) => ({ name, kid: newKid() }));
    await insertServerKeys(
      trx,
      rotated.map(({ name, kid }) => ({ name, kid, value: box.seal(newSecret()), activates_at: activatesAt })),
    );
    const rows = await listServerKeyTimeline(trx);
    const removed: ServerKeyRotation['removed'] = [];
    for (const name of SERVER_KEY_NAMES) {
      if (name === 'hashing_key') continue;
      const life = lifeAfterRetirement(name) * 1000;
      for (const v of timeline(
        rows.filter((r) => r.name === name),
        now.getTime(),
      )) {
        if (v.retiredAt !== undefined && v.retiredAt + life <= now.getTime()) removed.push({ name, kid: v.kid });
      }
    }
    for (const { name, kid } of removed) await deleteServerKey(trx, name, kid);
    const left = rows.filter((r) => !removed.some((d) => d.name === r.name && d.kid === r.kid));
    const keys = SERVER_KEY_NAMES.flatMap((name) =>
      keyViews(
        name,
        left.filter((r) => r.name === name),
        now.getTime(),
      ),
    );
    return { activates_at: activatesAt.toISOString(), rotated, removed, keys };
  });
}

/**
 * The key versions of one process, re-read from the database by `refresh()` (the key watcher
 * calls it every KEY_POLL_SECONDS). Which version signs and which still verify is decided at
 * each use from the clock, so activation and aging out need no reload.
 */
export class ServerKeys {
  private versions = new Map<ServerKeyName, StoredVersion[]>();
  private fingerprint = '';
  private readonly derived = new Map<string, crypto.KeyObject>();
  /**
   * verifying()'s answers until the clock reaches the next activation or end of life, or the
   * versions are re-read: every client check and keyed hash asks, and the answer rarely changes.
   */
  private readonly answers = new Map<string, { versions: Map<ServerKeyName, StoredVersion[]>; until: number; list: KeyVersion[] }>();

  private constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  /** Loads the keys, creating the first versions on a first start. */
  static async load(db: Db, box: SecretBox): Promise<ServerKeys> {
    await ensureServerKeys(db, box);
    const keys = new ServerKeys(db, box);
    await keys.refresh();
    return keys;
  }

  /** Re-reads the versions; true when they changed. */
  async refresh(): Promise<boolean> {
    const rows = await listServerKeyVersions(this.db);
    const fingerprint = rows.map((r) => `${r.name}/${r.kid}/${r.activates_at.getTime()}/${r.value}`).join(',');
    if (fingerprint === this.fingerprint) return false;
    const versions = new Map<ServerKeyName, StoredVersion[]>();
    for (const row of rows) {
      if (!(SERVER_KEY_NAMES as readonly string[]).includes(row.name)) continue;
      // A value stored before encryption at rest is sealed now.
      if (!SecretBox.isSealed(row.value)) await updateServerKeyValue(this.db, row.name, row.kid, this.box.seal(row.value));
      const secret = this.box.open(row.value);
      const list = versions.get(row.name as ServerKeyName) ?? [];
      const bytes = Buffer.from(secret, 'base64url');
      list.push({ kid: row.kid, secret, bytes, key: crypto.createSecretKey(bytes), activatesAt: row.activates_at.getTime() });
      versions.set(row.name as ServerKeyName, list);
    }
    for (const name of SERVER_KEY_NAMES) if (!versions.get(name)?.length) throw new Error(`server key ${name} is missing`);
    this.versions = versions;
    this.fingerprint = fingerprint;
    return true;
  }

  private timelineOf(name: ServerKeyName, now: number): KeyVersion[] {
    const list = this.versions.get(name)!;
    const byKid = new Map(list.map((v) => [v.kid, v]));
    return timeline(
      list.map((v) => ({ kid: v.kid, activates_at: new Date(v.activatesAt) })),
      now,
    ).map((t) => ({ ...byKid.get(t.kid)!, retiredAt: t.retiredAt }));
  }

  /** The version that signs now: the newest one already active (the first version if none is). */
  signing(name: ServerKeyName): KeyVersion {
    return this.verifying(name)[0]!;
  }

  /**
   * The versions that verify now: the signing one first, then those not active yet (another
   * process may already sign with one if the clocks differ), then retired ones still within
   * their life, newest first.
   */
  verifying(name: ServerKeyName, purpose?: HashPurpose): KeyVersion[] {
    const now = Date.now();
    const id = `${name}/${purpose ?? ''}`;
    const known = this.answers.get(id);
    if (known && known.versions === this.versions && now < known.until) return known.list;
    const life = lifeAfterRetirement(name, purpose) * 1000;
    const all = this.timelineOf(name, now);
    const signing = all.filter((v) => v.activatesAt <= now).at(-1) ?? all[0]!;
    const others = all
      .filter((v) => v.kid !== signing.kid && (v.activatesAt > now || (v.retiredAt !== undefined && v.retiredAt + life > now)))
      .reverse();
    const list = [signing, ...others];
    // The answer holds until a version activates (which retires another) or a retired one's life ends.
    const changes = all.flatMap((v) => [v.activatesAt, v.retiredAt === undefined ? Number.POSITIVE_INFINITY : v.retiredAt + life]);
    const until = Math.min(...changes.filter((at) => at > now));
    this.answers.set(id, { versions: this.versions, until, list });
    return list;
  }

  private purposeKey(version: KeyVersion, purpose: HashPurpose): crypto.KeyObject {
    const id = `${version.kid}/${purpose}`;
    let key = this.derived.get(id);
    if (!key) {
      key = crypto.createSecretKey(Buffer.from(crypto.hkdfSync('sha256', version.bytes, Buffer.alloc(0), `almoner ${purpose}`, 32)));
      this.derived.set(id, key);
    }
    return key;
  }

  private hmac(version: KeyVersion, purpose: HashPurpose, value: string): string {
    return `${version.kid}.${crypto.createHmac('sha256', this.purposeKey(version, purpose)).update(value, 'utf8').digest('base64url')}`;
  }

  /** HMAC-SHA-256 of `value` under the current hashing key, for `purpose`: "<kid>.<mac>". */
  keyedHash(purpose: HashPurpose, value: string): string {
    return this.hmac(this.verifying('hashing_key', purpose)[0]!, purpose, value);
  }

  /** `value`'s keyed hash under every hashing key version still live for `purpose`, current first (for lookups). */
  keyedHashes(purpose: HashPurpose, value: string): string[] {
    return this.verifying('hashing_key', purpose).map((version) => this.hmac(version, purpose, value));
  }
}

/** What hashes lookups need of the keys (so units can be given a stand-in). */
export type KeyedHasher = Pick<ServerKeys, 'keyedHash' | 'keyedHashes'>;

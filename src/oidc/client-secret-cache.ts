import crypto from 'node:crypto';
import argon2 from 'argon2';

/**
 * Whether `now` lies in [since, since + ms): a clock stepped back (NTP, or a test moving
 * Date) ends an entry or a window instead of stretching it.
 */
function within(since: number, ms: number, now = Date.now()): boolean {
  return now >= since && now - since < ms;
}

/** How long a successful check is remembered. */
export const CLIENT_SECRET_CACHE_TTL_MS = 60_000;

/**
 * argon2id on every token request would cap a process at a few dozen requests per second,
 * so a successful check is remembered briefly. Entries are keyed by an HMAC of the client
 * id, the stored hash and the presented secret: the cache never holds a secret, and a
 * rotated secret (a new stored hash) misses at once in every process. Failures are never
 * cached.
 */
export class ClientSecretCache {
  /** Successful checks by entry key: when each was made. */
  private readonly entries = new Map<string, number>();
  private readonly failures = new Map<string, { count: number; since: number }>();
  /** Checks under way, by entry key: concurrent presentations of one secret share one argon2 run. */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** argon2 verifications performed (the expensive path), for tests and metrics. */
  argon2Runs = 0;
  /** Failed checks per client and address allowed per window before argon2 stops running for them. */
  failureLimit = 10;
  failureWindowMs = 60_000;

  /** The entry keys' HMAC keys, current first: one fixed key, or the rotating server key's live versions. */
  private readonly keys: () => readonly Buffer[];

  constructor(
    key: Buffer | (() => readonly Buffer[]),
    private readonly ttlMs = CLIENT_SECRET_CACHE_TTL_MS,
    private readonly maxEntries = 10_000,
  ) {
    this.keys = typeof key === 'function' ? key : () => [key];
  }

  private entryKey(clientId: string, storedHash: string, presented: string, key: Buffer): string {
    return crypto.createHmac('sha256', key).update(clientId).update('\0').update(storedHash).update('\0').update(presented).digest('base64url');
  }

  /**
   * A flood of wrong secrets must not buy argon2 time: past the failure limit for a client
   * and caller address, checks fail at once (a correct secret already in the cache still
   * passes, so a busy legitimate client is unaffected).
   */
  private limited(key: string): boolean {
    const entry = this.failures.get(key);
    return entry !== undefined && within(entry.since, this.failureWindowMs) && entry.count >= this.failureLimit;
  }

  private recordFailure(key: string): void {
    const now = Date.now();
    const entry = this.failures.get(key);
    if (!entry || !within(entry.since, this.failureWindowMs, now)) {
      if (this.failures.size >= this.maxEntries) this.failures.clear();
      this.failures.set(key, { count: 1, since: now });
    } else {
      entry.count += 1;
    }
  }

  async verify(clientId: string, storedHash: string, presented: string, source = ''): Promise<boolean> {
    if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
    const [current, ...older] = this.keys();
    const key = this.entryKey(clientId, storedHash, presented, current!);
    // Entries made under a key rotated out moments ago still count, so a rotation does not send every client to argon2 at once.
    for (const entry of [key, ...older.map((k) => this.entryKey(clientId, storedHash, presented, k))]) {
      const checkedAt = this.entries.get(entry);
      if (checkedAt === undefined) continue;
      if (within(checkedAt, this.ttlMs)) return true;
      this.entries.delete(entry);
    }
    // A busy client's concurrent first requests (a cold cache, or an entry just expired) wait
    // for the one check under way instead of each running argon2 and counting as failures.
    const inflight = this.pending.get(key);
    if (inflight) return inflight;
    const failureKey = `${clientId}\0${source}`;
    if (this.limited(failureKey)) return false;
    const check = this.check(key, failureKey, storedHash, presented).finally(() => this.pending.delete(key));
    this.pending.set(key, check);
    return check;
  }

  private async check(key: string, failureKey: string, storedHash: string, presented: string): Promise<boolean> {
    // Counted as a failure until it succeeds, so concurrent attempts cannot all slip past the limit.
    this.recordFailure(failureKey);
    let ok = false;
    this.argon2Runs += 1;
    try {
      ok = await argon2.verify(storedHash, presented);
    } catch {
      ok = false;
    }
    if (ok) {
      const entry = this.failures.get(failureKey);
      if (entry) entry.count = Math.max(0, entry.count - 1);
    }
    if (ok) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, Date.now());
    }
    return ok;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

import crypto from 'node:crypto';
import argon2 from 'argon2';
import { addressKey } from '../http/client-address.js';
import { clientSecretFailuresPerCallerAddress, clientSecretFailuresPerClient, type RateLimit } from '../limits/rate-limits.js';
import { LruMap } from './lru-map.js';

/**
 * Whether `now` lies in [since, since + ms): a clock stepped back (NTP, or a test moving
 * Date) ends an entry or a window instead of stretching it.
 */
function within(since: number, ms: number, now = Date.now()): boolean {
  return now >= since && now - since < ms;
}

/** How long a successful check is remembered. */
export const CLIENT_SECRET_CACHE_TTL_MS = 60_000;

/** Failures counted in one window. Reservations hold the object, so a give-back never reaches a later window. */
interface FailureWindow {
  count: number;
  since: number;
}

/**
 * argon2id on every token request would cap a process at a few dozen requests per second,
 * so a successful check is remembered briefly. Entries are keyed by an HMAC of the client
 * id, the stored hash and the presented secret: the cache never holds a secret, and a
 * rotated secret (a new stored hash) misses at once in every process. Failures are never
 * cached.
 *
 * Wrong secrets must not buy argon2 time either: failures are counted per client and caller
 * address (IPv6 by its /64, as the sign-in throttle keys it) and per client across all
 * addresses; past either limit the check fails without argon2. Every record is a bounded
 * LRU, so a flood from many addresses evicts the oldest records, never all of them.
 */
export class ClientSecretCache {
  /** Successful checks by entry key: when each was made. */
  private readonly entries: LruMap<string, number>;
  /** Failures by client and caller address (IPv6 by /64). */
  private readonly failures: LruMap<string, FailureWindow>;
  /** Failures by client, from every address. */
  private readonly clientFailures: LruMap<string, FailureWindow>;
  /** When each client and caller address (IPv6 by /64) last presented the client's right secret. */
  private readonly vouched: LruMap<string, number>;
  /** Checks under way, by entry key: concurrent presentations of one secret share one argon2 run. */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** argon2 verifications performed (the expensive path), for tests and metrics. */
  argon2Runs = 0;
  /** The `process memory` store of two rate limits (src/limits/rate-limits.ts). */
  readonly limits: { perCallerAddress: RateLimit; perClient: RateLimit } = {
    perCallerAddress: clientSecretFailuresPerCallerAddress,
    perClient: clientSecretFailuresPerClient,
  };
  /** How long an address that presented the right secret stays exempt from the per-client ceiling. */
  vouchedMs = 24 * 3600_000;

  /**
   * The entry keys' HMAC keys, current first: one fixed key, or the rotating server key's live
   * versions. KeyObjects: Node checks a Buffer key's kind on every HMAC by throwing and catching
   * a native exception (docs/benchmarks.md, "Where a refresh's CPU goes").
   */
  private readonly keys: () => readonly crypto.KeyObject[];

  constructor(
    key: Buffer | (() => readonly crypto.KeyObject[]),
    private readonly ttlMs = CLIENT_SECRET_CACHE_TTL_MS,
    /** How many records of each kind (entries, failures, client ceilings, vouched addresses) it keeps. */
    readonly maxEntries = 10_000,
  ) {
    if (typeof key === 'function') this.keys = key;
    else {
      const fixed = [crypto.createSecretKey(key)];
      this.keys = () => fixed;
    }
    this.entries = new LruMap(maxEntries);
    this.failures = new LruMap(maxEntries);
    this.clientFailures = new LruMap(maxEntries);
    this.vouched = new LruMap(maxEntries);
  }

  private entryKey(clientId: string, storedHash: string, presented: string, key: crypto.KeyObject): string {
    return crypto
      .createHmac('sha256', key)
      .update(clientId)
      .update('\0')
      .update(storedHash)
      .update('\0')
      .update(presented)
      .digest('base64url');
  }

  /** The key's failure window in force now, started afresh when the last one is over. */
  private window(records: LruMap<string, FailureWindow>, limit: RateLimit, key: string, now: number): FailureWindow {
    const current = records.get(key);
    if (current && within(current.since, limit.windowSeconds * 1000, now)) return current;
    const fresh = { count: 0, since: now };
    records.set(key, fresh);
    return fresh;
  }

  /**
   * Reserves a check as a failure before argon2 runs, or refuses it: synchronous, so
   * concurrent requests are counted one by one and cannot all pass the limit. Past the
   * per-client ceiling only an address the right secret came from recently is still checked
   * (a flood from elsewhere does not lock the client itself out once its cached success ends).
   */
  private reserve(clientId: string, address: string): FailureWindow[] | undefined {
    const now = Date.now();
    const perAddress = this.window(this.failures, this.limits.perCallerAddress, address, now);
    if (perAddress.count >= this.limits.perCallerAddress.max) return undefined;
    const perClient = this.window(this.clientFailures, this.limits.perClient, clientId, now);
    const vouchedAt = this.vouched.get(address);
    if (perClient.count >= this.limits.perClient.max && !(vouchedAt !== undefined && within(vouchedAt, this.vouchedMs, now)))
      return undefined;
    perAddress.count += 1;
    perClient.count += 1;
    return [perAddress, perClient];
  }

  async verify(clientId: string, storedHash: string, presented: string, source = ''): Promise<boolean> {
    if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
    const keys = this.keys();
    const key = this.entryKey(clientId, storedHash, presented, keys[0]!);
    // Entries made under a key rotated out moments ago still count, so a rotation does not send
    // every client to argon2 at once; their HMACs are computed only when the current one misses.
    for (let i = 0; i < keys.length; i += 1) {
      const entry = i === 0 ? key : this.entryKey(clientId, storedHash, presented, keys[i]!);
      const checkedAt = this.entries.get(entry);
      if (checkedAt === undefined) continue;
      if (within(checkedAt, this.ttlMs)) return true;
      this.entries.delete(entry);
    }
    // A busy client's concurrent first requests (a cold cache, or an entry just expired) wait
    // for the one check under way instead of each running argon2 and counting as failures.
    const inflight = this.pending.get(key);
    if (inflight) return inflight;
    const address = `${clientId}\0${addressKey(source)}`;
    const reserved = this.reserve(clientId, address);
    if (!reserved) return false;
    const check = this.check(key, address, reserved, storedHash, presented).finally(() => this.pending.delete(key));
    this.pending.set(key, check);
    return check;
  }

  private async check(key: string, address: string, reserved: FailureWindow[], storedHash: string, presented: string): Promise<boolean> {
    let ok = false;
    this.argon2Runs += 1;
    try {
      ok = await argon2.verify(storedHash, presented);
    } catch {
      ok = false;
    }
    if (ok) {
      // Counted as a failure until it succeeded: give it back to the windows it was taken from.
      for (const window of reserved) window.count = Math.max(0, window.count - 1);
      const now = Date.now();
      this.entries.set(key, now);
      this.vouched.set(address, now);
    }
    return ok;
  }

  /** Forgets the successful checks (each is then verified again); failure records stay. */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

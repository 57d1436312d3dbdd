import type { Executor } from '../db/executor.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import { clearAttempts, giveBackAttempt, takeAttempt } from './attempt-counter-repository.js';
import type { AttemptLimit } from './rate-limits.js';

/** An attempt taken under a limit: settle it with `succeeded` when it should not count. */
export interface TakenAttempt {
  readonly key: string;
}

export type AttemptDecision = { allowed: true; taken: TakenAttempt } | { allowed: false; retryAfterSeconds: number };

/**
 * The `attempt_counters` store of the rate limits (src/limits/rate-limits.ts): at most `max`
 * attempts per key within a fixed window of `windowSeconds`.
 * Reserves attempts before the guarded work, in one statement per key (attempt_counters), so a
 * concurrent burst cannot all pass a count that none of them has reached yet: the n-th
 * attempt in a window is told it is the n-th. Keys are HMACs under the server hashing key, so
 * the table holds no e-mail or IP address; a key rotation starts the counts afresh.
 */
export class AttemptCounter {
  constructor(
    private readonly db: Executor,
    private readonly hasher: KeyedHasher,
  ) {}

  private key(limit: AttemptLimit, value: string): string {
    return `${limit.name}:${this.hasher.keyedHash('attempt_counter', `${limit.name}\0${value}`)}`;
  }

  /** Takes one attempt for `value`; refused (with how long to wait) once the window holds `max`. */
  async take(limit: AttemptLimit, value: string): Promise<AttemptDecision> {
    const key = this.key(limit, value);
    const { count, windowEndsAt } = await takeAttempt(this.db, key, limit.windowSeconds);
    if (count <= limit.max) return { allowed: true, taken: { key } };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEndsAt.getTime() - Date.now()) / 1000)) };
  }

  /**
   * Takes one attempt under each limit (e.g. per account and per address), all or none: when
   * any refuses, the others are given back and the longest wait is the answer.
   */
  async takeAll(
    entries: readonly { limit: AttemptLimit; value: string }[],
  ): Promise<{ allowed: true; taken: TakenAttempt[] } | { allowed: false; retryAfterSeconds: number }> {
    const decisions = await Promise.all(entries.map((e) => this.take(e.limit, e.value)));
    const refused = decisions.filter((d): d is { allowed: false; retryAfterSeconds: number } => !d.allowed);
    const taken = decisions.flatMap((d) => (d.allowed ? [d.taken] : []));
    if (refused.length === 0) return { allowed: true, taken };
    await Promise.all(taken.map((t) => giveBackAttempt(this.db, t.key)));
    return { allowed: false, retryAfterSeconds: Math.max(...refused.map((r) => r.retryAfterSeconds)) };
  }

  /** The attempt succeeded: it does not count against the limit. */
  async succeeded(taken: TakenAttempt): Promise<void> {
    await giveBackAttempt(this.db, taken.key);
  }

  /** Gives one attempt back to `value`'s current window under `limit`, when the attempt was taken by another request (a passkey sign-in that answered its options). */
  async giveBack(limit: AttemptLimit, value: string): Promise<void> {
    await giveBackAttempt(this.db, this.key(limit, value));
  }

  /** Forgets every attempt of `value` under `limit` (e.g. a successful sign-in clears its failures). */
  async clear(limit: AttemptLimit, value: string): Promise<void> {
    await clearAttempts(this.db, this.key(limit, value));
  }
}

import net from 'node:net';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Db } from '../db/database.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import { THROTTLE_TABLE, throttleStoreClient } from './login-throttle-store.js';

/**
 * Progressive lockout: `failures` failed sign-ins within `windowSeconds` lock the key for
 * `baseLockSeconds`; each further lockout within `historySeconds` doubles it, up to
 * `maxLockSeconds`. The numbers are in the README ("Hosted pages").
 */
export interface LockoutPolicy {
  /** Key prefix in login_throttle. */
  name: string;
  failures: number;
  windowSeconds: number;
  baseLockSeconds: number;
  maxLockSeconds: number;
  historySeconds: number;
}

/** Per account (e-mail address, known or not, so a lockout reveals nothing about existence). */
export const ACCOUNT_POLICY: LockoutPolicy = { name: 'account', failures: 5, windowSeconds: 15 * 60, baseLockSeconds: 60, maxLockSeconds: 60 * 60, historySeconds: 24 * 3600 };
/** Per caller address (IPv6 by /64): slows a password spray across many accounts. */
export const ADDRESS_POLICY: LockoutPolicy = { name: 'address', failures: 20, windowSeconds: 15 * 60, baseLockSeconds: 5 * 60, maxLockSeconds: 60 * 60, historySeconds: 24 * 3600 };

export type LockoutScope = 'account' | 'address';

/**
 * Keys are HMACs under the server's hashing key ("<kid>.<mac>"): the table never holds an
 * e-mail address or an IP address, nor a plain hash a dictionary of them would find. Failures
 * are counted under the current key; a lockout is honoured under every version still live
 * (a day after a rotation), so a rotation lifts no lockout (it restarts counts short of one).
 */
function keyOf(keys: KeyedHasher, value: string): string {
  return keys.keyedHash('login_throttle', value);
}

function keysOf(keys: KeyedHasher, value: string): string[] {
  return keys.keyedHashes('login_throttle', value);
}

/** An IPv6 caller is throttled by its /64, which one subscriber usually holds whole. */
export function addressKey(ip: string): string {
  if (net.isIPv6(ip)) {
    const [head = '', tail = ''] = ip.split('::');
    const left = head ? head.split(':') : [];
    const right = tail ? tail.split(':') : [];
    const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
    return `${groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
  }
  return ip;
}

class ProgressiveLockout {
  private readonly failures: RateLimiterPostgres;
  private readonly lockouts: RateLimiterPostgres;
  private readonly lock: RateLimiterPostgres;

  constructor(
    client: ReturnType<typeof throttleStoreClient>,
    private readonly policy: LockoutPolicy,
    sweep: boolean,
  ) {
    // tableCreated: the migration owns the table. One limiter per process sweeps rows
    // expired an hour ago (its timer is unref'd); the others leave it to that one.
    const base = { storeClient: client, storeType: 'pool', tableName: THROTTLE_TABLE, tableCreated: true, clearExpiredByTimeout: false };
    this.failures = new RateLimiterPostgres({ ...base, keyPrefix: `${policy.name}_fail`, points: policy.failures, duration: policy.windowSeconds, clearExpiredByTimeout: sweep });
    this.lockouts = new RateLimiterPostgres({ ...base, keyPrefix: `${policy.name}_lockouts`, points: 1_000_000, duration: policy.historySeconds });
    this.lock = new RateLimiterPostgres({ ...base, keyPrefix: `${policy.name}_lock`, points: 1, duration: policy.maxLockSeconds });
  }

  /** Seconds until the key may try again; 0 when it is not locked. */
  async retryAfter(key: string): Promise<number> {
    const state = await this.lock.get(key);
    return state && state.consumedPoints > 1 && state.msBeforeNext > 0 ? Math.ceil(state.msBeforeNext / 1000) : 0;
  }

  /** Counts a failure; returns the lockout's length when this failure starts one. */
  async fail(key: string): Promise<number> {
    const counted = await this.failures.penalty(key, 1);
    if (counted.consumedPoints < this.policy.failures) return 0;
    const previous = (await this.lockouts.penalty(key, 1)).consumedPoints - 1;
    const seconds = Math.min(this.policy.maxLockSeconds, this.policy.baseLockSeconds * 2 ** Math.min(previous, 20));
    await this.lock.block(key, seconds);
    await this.failures.delete(key);
    return seconds;
  }

  async reset(key: string): Promise<void> {
    await Promise.all([this.failures.delete(key), this.lockouts.delete(key), this.lock.delete(key)]);
  }
}

export interface Lockout {
  scope: LockoutScope;
  retryAfterSeconds: number;
}

/** Sign-in throttling in Postgres (rate-limiter-flexible), so it holds across processes. */
export class LoginThrottle {
  private readonly account: ProgressiveLockout;
  private readonly address: ProgressiveLockout;

  constructor(
    db: Db,
    policies: { account: LockoutPolicy; address: LockoutPolicy } = { account: ACCOUNT_POLICY, address: ADDRESS_POLICY },
    private readonly keys: KeyedHasher,
  ) {
    const client = throttleStoreClient(db);
    this.account = new ProgressiveLockout(client, policies.account, true);
    this.address = new ProgressiveLockout(client, policies.address, false);
  }

  /** The lockout in force for this e-mail address or caller address, if any. */
  async lockedOut(email: string, ip: string): Promise<Lockout | undefined> {
    const longest = async (lockout: ProgressiveLockout, value: string) => Math.max(0, ...(await Promise.all(keysOf(this.keys, value).map((key) => lockout.retryAfter(key)))));
    const [account, address] = await Promise.all([longest(this.account, email), longest(this.address, addressKey(ip))]);
    if (account > 0 || address > 0) return account >= address ? { scope: 'account', retryAfterSeconds: account } : { scope: 'address', retryAfterSeconds: address };
    return undefined;
  }

  /** Records a failed sign-in; returns the lockout it starts, if it starts one. */
  async failed(email: string, ip: string): Promise<Lockout | undefined> {
    const [account, address] = await Promise.all([this.account.fail(keyOf(this.keys, email)), this.address.fail(keyOf(this.keys, addressKey(ip)))]);
    if (account > 0 || address > 0) return account >= address ? { scope: 'account', retryAfterSeconds: account } : { scope: 'address', retryAfterSeconds: address };
    return undefined;
  }

  /** A successful sign-in clears the account's history (never the address's: one good password does not vouch for the rest of the traffic). */
  async succeeded(email: string): Promise<void> {
    await Promise.all(keysOf(this.keys, email).map((key) => this.account.reset(key)));
  }
}

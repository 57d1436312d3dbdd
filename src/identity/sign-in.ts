import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import type { Environment, User } from '../db/schema.js';
import { countAudit, recordAudit } from '../audit/audit-log.js';
import type { Executor } from '../db/executor.js';
import { findUserByEmail, replacePasswordHash } from '../accounts/repository.js';
import { hashPassword, needsRehash, verifyPassword, type PasswordParams } from '../accounts/passwords.js';
import { MAX_PASSWORD_LENGTH } from '../accounts/password-policy.js';
import { normaliseEmail } from '../accounts/service.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { Logger } from '../logging/logger.js';
import type { LoginThrottle, LockoutScope } from './login-throttle.js';

export interface SignInAttempt {
  email: string;
  password: string;
  ip: string;
  environment: Environment;
  requestId: string | null;
  /** The application the user is signing in for, when there is one (audit only). */
  clientId: string | null;
  /**
   * Where a success's writes go: in the authorization flow, the request's unit of work, so
   * they commit with the Interaction that carries the sign-in. Without it (the dashboard's
   * sign-in) they are written at once.
   */
  commit?: (work: (trx: Executor) => Promise<void>) => Promise<void>;
}

export type SignInOutcome =
  { kind: 'signed_in'; user: User } | { kind: 'invalid' } | { kind: 'locked_out'; scope: LockoutScope; retryAfterSeconds: number };

/** The e-mail key throttling uses: the normalised address, or the trimmed input when it is not one. */
function throttleKey(input: string): { email: string | undefined; key: string } {
  try {
    const email = normaliseEmail(input);
    return { email, key: email };
  } catch {
    return { email: undefined, key: input.trim().toLowerCase().slice(0, 254) };
  }
}

/**
 * E-mail and password sign-in, shared by the authorization flow and the connections page:
 * throttled per account and per address (an attempt is reserved before its password is
 * checked), one answer for every kind of failure, argon2id
 * hashes upgraded to the configured parameters after a successful sign-in, audited.
 */
export class SignIn {
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly db: Db,
    private readonly throttle: LoginThrottle,
    private readonly params: PasswordParams,
    private readonly keys: KeyedHasher,
  ) {}

  /**
   * What audit rows say of the e-mail field: never the text as typed (it may be a stranger's
   * address, or a password typed into the wrong field), but its HMAC under the hashing key,
   * named by the key's id, so rows of one input can be correlated and checked against a
   * candidate by someone holding the key; plus the account's own address when there is one.
   */
  private typedEmail(key: string, user: User | undefined): Record<string, string> {
    return { email_hmac: this.keys.keyedHash('audit_input', key), ...(user ? { email: user.email } : {}) };
  }

  // Verifying an unknown address against a hash of a random password with the configured
  // parameters makes it as slow as a wrong password, so timing does not tell them apart.
  private dummy(): Promise<string> {
    return (this.dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'), this.params));
  }

  async attempt(attempt: SignInAttempt, log?: Logger): Promise<SignInOutcome> {
    const { email, key } = throttleKey(attempt.email);
    const audit = { environment: attempt.environment, ip: attempt.ip || null, requestId: attempt.requestId, clientId: attempt.clientId };
    // The attempt is reserved before anything else: concurrent attempts cannot all pass a
    // lockout check that their failures have not yet reached.
    const reserved = await this.throttle.reserve(key, attempt.ip);
    if ('lockout' in reserved) {
      // Refused before the password is looked at: a locked account is no oracle. A lockout
      // under attack refuses thousands: one audit row per lockout window and key counts them
      // (docs/security.md, "Racing the sign-in lockout with concurrent wrong passwords").
      const locked = reserved.lockout;
      const window = await this.throttle.lockoutWindow(key, attempt.ip, locked.scope);
      await countAudit(
        this.db,
        { ...audit, event: 'login.failed', details: { ...this.typedEmail(key, undefined), reason: 'locked_out', scope: locked.scope } },
        `login.failed:${window}`,
      );
      return { kind: 'locked_out', ...locked };
    }
    const { reservation } = reserved;
    const user = email ? await findUserByEmail(this.db, email) : undefined;
    const password = attempt.password.length <= MAX_PASSWORD_LENGTH ? attempt.password : undefined;
    const verified = password !== undefined && (await verifyPassword(user?.password_hash ?? (await this.dummy()), password));
    if (!user || !verified || user.disabled_at) {
      const reason = !user ? 'unknown_user' : user.disabled_at ? 'disabled' : 'wrong_password';
      await recordAudit(this.db, {
        ...audit,
        event: 'login.failed',
        actorUserId: user?.id ?? null,
        details: { ...this.typedEmail(key, user), reason },
      });
      const lockout = await this.throttle.failed(reservation);
      if (!lockout) return { kind: 'invalid' };
      await recordAudit(this.db, {
        ...audit,
        event: 'login.locked_out',
        actorUserId: user?.id ?? null,
        details: { ...this.typedEmail(key, user), scope: lockout.scope, seconds: lockout.retryAfterSeconds },
      });
      return { kind: 'locked_out', ...lockout };
    }
    if (needsRehash(user.password_hash, this.params)) {
      // Best effort: a failed upgrade must not fail the sign-in; the next one tries again.
      await hashPassword(password!, this.params)
        .then((hash) => replacePasswordHash(this.db, user.id, user.password_hash, hash))
        .catch((error: Error) => log?.warn({ err: error }, 'password rehash failed'));
    }
    // The throttle settled and the audit row, with the Interaction that carries the sign-in when
    // there is a unit: one transaction.
    const work = async (trx: Executor) => {
      await this.throttle.succeeded(reservation, trx);
      await recordAudit(trx, { ...audit, event: 'login.succeeded', actorUserId: user.id });
    };
    await (attempt.commit ? attempt.commit(work) : work(this.db));
    return { kind: 'signed_in', user };
  }
}

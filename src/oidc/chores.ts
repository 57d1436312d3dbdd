import type { Db } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { KEY_POLL_SECONDS, type ServerKeys } from '../keys/server-keys.js';
import { sweepExpired } from '../db/provider-store.js';
import { deleteExpiredChallenges } from '../mfa/passkey-repository.js';
import { sweepThrottleRows } from '../identity/login-throttle-repository.js';
import { sweepBrowserSessions } from '../identity/browser-sessions-repository.js';
import { sweepAttemptCounters } from '../limits/attempt-counter-repository.js';
import { deleteExpiredOneTimeSecrets } from '../keys/one-time-secrets-repository.js';
import { sweepReplayMarks } from '../limits/replay-marks-repository.js';
import { deleteExpiredPushedRequestBrowsers } from './pushed-request-browsers-repository.js';
import { expireDueConsents } from '../authorizations/fdx-consents.js';
import { sweepIdempotencyKeys } from '../idempotency/idempotency-keys-repository.js';
import { keysVersion } from './keys.js';
import { deleteExpiredSuccessors } from './refresh-successors-repository.js';

/**
 * The providers' background work, on timers that never keep the process alive: noticing key
 * rotations made by another process or the CLI, and sweeping expired provider rows.
 */

const KEY_POLL_MS = KEY_POLL_SECONDS * 1000;
const SWEEP_MS = 10 * 60_000;

interface ChoreOptions {
  db: Db;
  logger: Logger;
  serverKeys: ServerKeys;
  /** The signing-key fingerprint the providers were last built from. */
  keyVersion: () => string;
  /** Rebuilds the providers from the current signing keys. */
  rebuild: () => Promise<void>;
}

/**
 * The key watcher picks up signing-key rotations (rebuilding the providers) and server-key
 * rotations (cookie, CSRF, cache and hashing keys, read at each use) within KEY_POLL_SECONDS.
 */
function watchKeys({ db, logger, serverKeys, keyVersion, rebuild }: ChoreOptions): NodeJS.Timeout {
  return setInterval(() => {
    void keysVersion(db)
      .then(async (version) => {
        if (version !== keyVersion()) {
          await rebuild();
          logger.info('signing keys changed; providers rebuilt');
        }
      })
      .catch((error: Error) => logger.warn({ err: error }, 'key check failed'));
    void serverKeys
      .refresh()
      .then((changed) => changed && logger.info('server keys changed; new versions loaded'))
      .catch((error: Error) => logger.warn({ err: error }, 'server key check failed'));
  }, KEY_POLL_MS);
}

/** Deletes expired provider rows (oidc_models), refresh successors, passkey challenges, sign-in throttle rows, attempt counters, session records, secrets never shown, replay marks past use, pushed requests' browsers and idempotency keys past their 24 hours; and ends FDX consents whose time is up (with their authorizations). */
function sweep({ db, logger }: ChoreOptions): NodeJS.Timeout {
  return setInterval(() => {
    void Promise.all([
      sweepExpired(db),
      deleteExpiredSuccessors(db),
      deleteExpiredChallenges(db),
      sweepThrottleRows(db, Date.now()),
      sweepAttemptCounters(db),
      sweepBrowserSessions(db),
      deleteExpiredOneTimeSecrets(db),
      sweepReplayMarks(db),
      deleteExpiredPushedRequestBrowsers(db),
      expireDueConsents(db),
      sweepIdempotencyKeys(db),
    ])
      .then(([deleted]) => deleted > 0 && logger.info({ deleted }, 'expired provider rows swept'))
      .catch((error: Error) => logger.warn({ err: error }, 'sweep failed'));
  }, SWEEP_MS);
}

/** Starts both chores; the returned function stops them. */
export function startChores(options: ChoreOptions): () => void {
  const timers = [watchKeys(options), sweep(options)];
  for (const timer of timers) timer.unref();
  return () => {
    for (const timer of timers) clearInterval(timer);
  };
}

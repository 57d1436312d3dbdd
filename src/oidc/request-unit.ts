import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import type { ModelWrite, StoredRow } from '../db/provider-store.js';

/**
 * One browser request of the authorization flow (the authorization endpoint, its resume, the
 * hosted pages' routes) as one unit of work over the provider's rows. oidc-provider saves and
 * deletes its models one call at a time: the resume after consent deletes the Interaction,
 * saves the AuthorizationCode, deletes the Session and saves it again under a new id, four
 * commits. Inside a unit the adapter instead
 *  - remembers what it read and wrote, so a second read of a row costs no query (and sees the
 *    request's own pending writes);
 *  - defers the saves and deletes of the models below, which the unit's middleware
 *    (middleware/request-unit.ts) writes in one statement before the response leaves: the
 *    browser's next request, which reads them, cannot come sooner.
 * Anything else the adapter does (a consume, a revocation) flushes the pending writes first,
 * so the order of the writes is the order of the calls.
 */

/** The models a browser request writes that nothing outside the request reads before its response. */
export const DEFERRED_IN_REQUEST = new Set(['Interaction', 'Session', 'Grant', 'AuthorizationCode']);

export class RequestUnit {
  /** Rows read or written in this request, by `${model}:${hashed id}`; null when absent or deleted. */
  readonly rows = new Map<string, StoredRow | null>();
  /** Sessions by uid as this request knows them (read with their Interaction, or saved): the row key, or null. */
  readonly sessionsByUid = new Map<string, string | null>();
  /** The last write of each row, by `${model}:${hashed id}`: a save after a delete replaces it. */
  readonly writes = new Map<string, ModelWrite>();
  /** Other writes of the request (an audit row, our authorization) committed with its rows. */
  readonly together: ((trx: Executor) => Promise<void>)[] = [];
  /** Set once written: a late call (from work the request started and did not await) goes straight to the database. */
  closed = false;

  write(key: string, write: ModelWrite): void {
    this.writes.delete(key); // re-inserted last: the order of the calls is kept
    this.writes.set(key, write);
  }

  /** Takes the pending writes (the caller writes them); later ones start a new batch. */
  take(): ModelWrite[] {
    const writes = [...this.writes.values()];
    this.writes.clear();
    return writes;
  }
}

const storage = new AsyncLocalStorage<RequestUnit>();

export function currentRequestUnit(): RequestUnit | undefined {
  const unit = storage.getStore();
  return unit && !unit.closed ? unit : undefined;
}

export function runInRequestUnit<T>(unit: RequestUnit, fn: () => Promise<T>): Promise<T> {
  return storage.run(unit, fn);
}

/**
 * Runs `work` with the request's own write, in the same transaction as its provider rows (so
 * the audit row of a consent commits with its Grant, or neither does); at once outside a unit.
 */
export async function writeWithRequest(db: Db, work: (trx: Executor) => Promise<void>): Promise<void> {
  const unit = currentRequestUnit();
  if (unit) unit.together.push(work);
  else await work(db);
}

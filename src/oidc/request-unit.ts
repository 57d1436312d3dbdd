import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import { hashId, type ModelWrite, type StoredRow } from '../db/provider-store.js';
import type { User } from '../db/schema.js';
import type { MembershipRow, RequestStateRow } from './request-state-repository.js';

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
 * A unit can start with one read of everything its request is about to read one query at a
 * time (request-state-repository.ts): it is remembered as the adapter's own reads would be,
 * and the signed-in user's identity and memberships are answered from it (request-account.ts).
 */

/** The models a browser request writes that nothing outside the request reads before its response. */
export const DEFERRED_IN_REQUEST = new Set(['Interaction', 'Session', 'Grant', 'AuthorizationCode']);

/** A user as this request read them: who they are, and the organizations they belong to. */
export interface RequestAccount {
  identity: Pick<User, 'id' | 'email' | 'display_name' | 'disabled_at'>;
  memberships: MembershipRow[];
}

/** The hashed ids a request's first read looked up. */
export interface RequestStateIds {
  interaction: string | null;
  session: string | null;
}

const stored = (payload: Record<string, unknown> | null, consumedAt: Date | null): StoredRow | null => (payload ? { payload, consumed_at: consumedAt } : null);
const member = (value: unknown, name: string): unknown => (value && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined);

export class RequestUnit {
  /** Rows read or written in this request, by `${model}:${hashed id}`; null when absent or deleted. */
  readonly rows = new Map<string, StoredRow | null>();
  /** Sessions by uid as this request knows them (read with their Interaction, or saved): the row key, or null. */
  readonly sessionsByUid = new Map<string, string | null>();
  /** The last write of each row, by `${model}:${hashed id}`: a save after a delete replaces it. */
  readonly writes = new Map<string, ModelWrite>();
  /** Other writes of the request (an audit row, our authorization) committed with its rows. */
  readonly together: ((trx: Executor) => Promise<void>)[] = [];
  /** Users read with the request's first read, by id. */
  readonly accounts = new Map<string, RequestAccount>();
  /** Set once written: a late call (from work the request started and did not await) goes straight to the database. */
  closed = false;

  write(key: string, write: ModelWrite): void {
    this.writes.delete(key); // re-inserted last: the order of the calls is kept
    this.writes.set(key, write);
  }

  /**
   * What a read of the request's state found (request-state-repository.ts), kept as the
   * adapter keeps what it reads itself. What the unit knows already stays: it may be a write
   * of this request, which is newer than the database.
   */
  remember(ids: RequestStateIds, state: RequestStateRow): void {
    const keep = <V>(map: Map<string, V>, key: string, value: V) => {
      if (!map.has(key)) map.set(key, value);
    };
    if (ids.interaction) {
      keep(this.rows, `Interaction:${ids.interaction}`, stored(state.i_payload, state.i_consumed_at));
      const uid = member(member(state.i_payload, 'session'), 'uid');
      if (typeof uid === 'string') {
        const sessionKey = state.us_id ? `Session:${state.us_id}` : null;
        keep(this.sessionsByUid, uid, sessionKey);
        if (sessionKey) keep(this.rows, sessionKey, stored(state.us_payload, state.us_consumed_at));
      }
      const grantId = member(member(member(state.i_payload, 'result'), 'consent'), 'grantId');
      if (typeof grantId === 'string') keep(this.rows, `Grant:${hashId(grantId)}`, stored(state.g_payload, state.g_consumed_at));
    }
    if (ids.session) {
      const key = `Session:${ids.session}`;
      keep(this.rows, key, stored(state.cs_payload, state.cs_consumed_at));
      const uid = member(state.cs_payload, 'uid');
      if (typeof uid === 'string') keep(this.sessionsByUid, uid, key);
    }
    if (state.u_id) {
      keep(this.accounts, state.u_id, {
        identity: { id: state.u_id, email: state.u_email!, display_name: state.u_display_name, disabled_at: state.u_disabled_at },
        memberships: state.u_memberships ?? [],
      });
    }
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

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Executor } from '../db/executor.js';
import { hashId, type ModelWrite, type StoredRow } from '../db/provider-store.js';
import type { User } from '../db/schema.js';
import type { AuditEvent } from '../audit/audit-log.js';
import type { AuthorizationContext } from '../authorizations/authorizations.js';
import type { MembershipRow, RequestStateRow } from './request-state-repository.js';

/**
 * One request that enters the provider (the token and introspection endpoints, the
 * authorization endpoint and its resume, the hosted pages) as one unit of work over the
 * provider's rows. oidc-provider reads and saves its models one call at a time: a refresh is
 * ten round trips and five commits, the resume after consent four commits. Inside a unit the
 * adapter instead
 *  - answers a second read of a row from the unit (and sees the request's own pending writes),
 *    and starts with one read of what the request names (unit-reads.ts: the presented code or
 *    refresh token with its Grant and authorization; the Interaction with its Session, Grant
 *    and user);
 *  - defers the writes its plan names, which the one middleware (middleware/unit-of-work.ts)
 *    writes with one function (unit-of-work-repository.ts, commitUnit) before the response
 *    leaves.
 * The unit also carries the caller (its address, DPoP proof and verified client secret) for
 * the model methods we replace (provider-internals.ts), which the library calls with no
 * request either.
 * This file holds the unit and its one AsyncLocalStorage, which only the adapter and those
 * methods read: the library calls them and passes no request. Everything else is handed the
 * unit from `ctx.state.oidc.unit` (request-scope.ts).
 */

/** What a kind of request defers, and when its writes are made. */
export interface UnitPlan {
  readonly kind: 'token' | 'browser' | 'client';
  /** Models whose saves wait for the commit; reads of them are remembered. */
  readonly saves: ReadonlySet<string>;
  /** Models whose deletes wait for the commit. */
  readonly deletes: ReadonlySet<string>;
  /** Models whose (first) consume waits for the commit, which then writes only if the consume wins. */
  readonly consumes: ReadonlySet<string>;
  /** Written whatever the outcome (as the adapter's own calls would have been), or only for a 200. */
  readonly writesOnFailure: boolean;
}

// ClientCredentials: a fapi2 client's own token (docs/bank-data.md), looked up by introspection as the others are.
const TOKENS = new Set(['AccessToken', 'ClientCredentials', 'RefreshToken', 'AuthorizationCode']);
const BROWSER_ROWS = new Set(['Interaction', 'Session', 'Grant', 'AuthorizationCode']);

/**
 * The token endpoint (and introspection, which writes nothing): the consume and the new tokens
 * commit together, once the provider built a successful response, or not at all; a request
 * that loses the race to consume wrote nothing and is answered invalid_grant.
 */
export const TOKEN_REQUEST: UnitPlan = { kind: 'token', saves: TOKENS, deletes: new Set(), consumes: TOKENS, writesOnFailure: false };

/**
 * A browser request of the authorization flow: the rows it saves and deletes are read by
 * nothing outside the request before its response (the browser's next request cannot come
 * sooner), so they are written in one statement before the response leaves.
 */
export const BROWSER_REQUEST: UnitPlan = {
  kind: 'browser',
  saves: BROWSER_ROWS,
  deletes: BROWSER_ROWS,
  consumes: new Set(),
  writesOnFailure: true,
};

/**
 * The other endpoints where a client authenticates (revocation, pushed authorization
 * requests): a unit that defers nothing and reads as the adapter reads without one, there to
 * carry the caller, and the client secret it verified (middleware/client-secret-check.ts), to
 * the provider's secret check (provider-internals.ts).
 */
export const CLIENT_REQUEST: UnitPlan = {
  kind: 'client',
  saves: new Set(),
  deletes: new Set(),
  consumes: new Set(),
  writesOnFailure: false,
};

/** Who sent the request, as our middleware decided (the address from trusted proxies only: http/client-address.ts). */
export interface Caller {
  /** The caller's address; it keys the client-secret failure limit (client-secret-cache.ts). */
  address: string;
  /** The request's DPoP proof, if any: a fapi2 client's refresh token is bound to its key. */
  dpopProof: string | undefined;
  /**
   * The client secret this request presented and that verified: the client and a SHA-256 of the
   * secret, which the provider's secret check compares with (verified-client-secret.ts).
   */
  verifiedClientSecret?: { clientId: string; digest: Buffer };
}

/** A user as this request read them: who they are, and the organizations they belong to. */
export interface RequestAccount {
  identity: Pick<User, 'id' | 'email' | 'display_name' | 'disabled_at' | 'credentials_epoch'>;
  memberships: MembershipRow[];
}

/** The hashed ids a browser request's first read looked up. */
export interface RequestStateIds {
  interaction: string | null;
  session: string | null;
}

const stored = (payload: Record<string, unknown> | null, consumedAt: Date | null): StoredRow | null =>
  payload ? { payload, consumed_at: consumedAt } : null;
const member = (value: unknown, name: string): unknown =>
  value && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;

export class UnitOfWork {
  /** Rows read or written in this request, by `${model}:${hashed id}`; null when absent or deleted. */
  readonly rows = new Map<string, StoredRow | null>();
  /** Sessions by uid as this request knows them (read with their Interaction, or saved): the row key, or null. */
  readonly sessionsByUid = new Map<string, string | null>();
  /** Users read with the request's first read, by id. */
  readonly accounts = new Map<string, RequestAccount>();
  /** Authorizations read with their token, by grant id; null when absent. */
  readonly authorizations = new Map<string, AuthorizationContext | null>();
  /** The last write of each row, by `${model}:${hashed id}`: a save after a delete replaces it. */
  readonly writes = new Map<string, ModelWrite>();
  /** The deferred consume: the commit writes nothing unless it wins. */
  consume: { model: string; id: string } | undefined;
  /** Audit rows committed with the writes. */
  readonly audits: AuditEvent[] = [];
  /** Other writes of the request (our authorization, a throttle's settlement) committed with its rows. */
  readonly together: ((trx: Executor) => Promise<void>)[] = [];
  /**
   * The sealed pair a refresh answers with, kept for the grace window (refresh-successors.ts):
   * written in the commit's one statement, only if the consume wins, so a rotation never
   * commits without the pair a duplicate of it is answered with.
   */
  successor: { id: string; ciphertext: string; expiresAt: Date } | undefined;
  /** An authorization whose last_used_at the commit bumps. */
  usedGrantId: string | undefined;
  /** Run once the commit is done: never for a request that wrote nothing or lost its race. */
  readonly afterCommit: (() => void)[] = [];
  /** Set once committed: a late call (from work the request started and did not await) goes straight to the database. */
  closed = false;

  constructor(
    readonly plan: UnitPlan,
    readonly caller: Caller,
  ) {}

  get hasWrites(): boolean {
    return (
      this.consume !== undefined ||
      this.writes.size > 0 ||
      this.together.length > 0 ||
      this.audits.length > 0 ||
      this.usedGrantId !== undefined ||
      this.successor !== undefined
    );
  }

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

  /**
   * What a read of the request's state found (request-state-repository.ts), kept as the
   * adapter keeps what it reads itself. What the unit knows already stays: it may be a write
   * of this request, which is newer than the database. A session that no longer counts (its
   * user's credentials changed since it was signed in: docs/accounts.md, "Sessions") is read
   * as absent, and so is a sign-in in progress that was proven before the change or belongs to
   * such a session: the provider then asks for a sign-in, or finds the interaction gone.
   */
  remember(ids: RequestStateIds, state: RequestStateRow): void {
    const keep = <V>(map: Map<string, V>, key: string, value: V) => {
      if (!map.has(key)) map.set(key, value);
    };
    if (ids.interaction) {
      const uid = member(member(state.i_payload, 'session'), 'uid');
      const live = state.i_login_live && (typeof uid !== 'string' || (state.us_id !== null && state.us_live));
      keep(this.rows, `Interaction:${ids.interaction}`, live ? stored(state.i_payload, state.i_consumed_at) : null);
      if (live && typeof uid === 'string') {
        const sessionKey = state.us_id ? `Session:${state.us_id}` : null;
        keep(this.sessionsByUid, uid, sessionKey);
        if (sessionKey) keep(this.rows, sessionKey, stored(state.us_payload, state.us_consumed_at));
      }
      const grantId = member(member(member(state.i_payload, 'result'), 'consent'), 'grantId');
      if (typeof grantId === 'string') keep(this.rows, `Grant:${hashId(grantId)}`, stored(state.g_payload, state.g_consumed_at));
    }
    if (ids.session) {
      const key = `Session:${ids.session}`;
      keep(this.rows, key, state.cs_live ? stored(state.cs_payload, state.cs_consumed_at) : null);
      const uid = member(state.cs_payload, 'uid');
      if (state.cs_live && typeof uid === 'string') keep(this.sessionsByUid, uid, key);
    }
    if (state.u_id) {
      keep(this.accounts, state.u_id, {
        identity: {
          id: state.u_id,
          email: state.u_email!,
          display_name: state.u_display_name,
          disabled_at: state.u_disabled_at,
          credentials_epoch: state.u_credentials_epoch ?? 0,
        },
        memberships: state.u_memberships ?? [],
      });
    }
  }
}

const storage = new AsyncLocalStorage<UnitOfWork>();

/** The open unit of the request the library is serving: for the adapter only (see above). */
export function unitForAdapter(): UnitOfWork | undefined {
  const unit = storage.getStore();
  return unit && !unit.closed ? unit : undefined;
}

/** The caller of the request the library is serving, for the model methods we replace (provider-internals.ts). */
export function callerOfLibraryCall(): Caller | undefined {
  return storage.getStore()?.caller;
}

export function runInUnit<T>(unit: UnitOfWork, fn: () => Promise<T>): Promise<T> {
  return storage.run(unit, fn);
}

/**
 * Runs `work` with the request's own writes, in the same transaction as its provider rows (so
 * the audit row of a consent commits with its Grant, or neither does); at once without a unit
 * (the dashboard's sign-in has none) or once it has committed.
 */
export async function writeWithUnit(unit: UnitOfWork | undefined, db: Executor, work: (trx: Executor) => Promise<void>): Promise<void> {
  if (unit && !unit.closed) unit.together.push(work);
  else await work(db);
}

/**
 * Runs `fn` once the unit's writes are committed (at once without a unit). oidc-provider
 * announces grant.success before the unit writes; anything that counts issued tokens waits
 * for the write, so a request that then loses its consume race is not counted.
 */
export function afterUnitCommits(unit: UnitOfWork | undefined, fn: () => void): void {
  if (unit && !unit.closed) unit.afterCommit.push(fn);
  else fn();
}

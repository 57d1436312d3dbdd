import { errors } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import {
  consumeModel,
  deleteModel,
  findConsumeState,
  findModel,
  findModelByUid,
  hashId,
  upsertModel,
  writeModels,
  type NewModelRow,
  type StoredRow,
} from '../db/provider-store.js';
import { unitForAdapter, type UnitOfWork } from './unit-of-work.js';
import { readInUnit } from './unit-reads.js';
import { GRANT_ERROR_DETAILS } from './provider-internals.js';
import { deleteGrantTokens, deleteToken } from '../authorizations/revoked-tokens-repository.js';

/**
 * oidc-provider's storage contract over one Postgres table (oidc_models), one adapter per
 * model and environment. Ids are stored as SHA-256 hashes and the raw id (the token, code or
 * session cookie value) is stripped from the payload, so the table yields no credential.
 * `consume` is a conditional update, so two concurrent uses of one code or refresh token
 * cannot both succeed. Inside a request that has a unit of work (unit-of-work.ts), reads go
 * through the unit (unit-reads.ts) and the writes its plan names wait for its one commit; the
 * adapter is the only reader of the unit's AsyncLocalStorage, since the library calls it
 * without the request. The queries are in db/provider-store.ts, which the resource gateway
 * reads access tokens through as well.
 */

export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; jti?: string; consumed?: unknown };

/** Called when a second use of a code or refresh token loses the race to consume it. */
export type ConsumeConflictHandler = (model: string, grantId: string | undefined, consumedAt: Date) => Promise<void>;

export interface AdapterOptions {
  db: Db;
  environment: Environment;
  onConsumeConflict?: ConsumeConflictHandler;
  /**
   * refresh_reuse_grace_seconds. Inside the window a consumed refresh token is reported as
   * unconsumed, so a duplicate reaches consume(), loses there without revoking, and the token
   * endpoint answers it with the stored successor pair (middleware/refresh-grace.ts).
   */
  refreshGraceSeconds?: number;
}

function sanitise(model: string, payload: AdapterPayload): Record<string, unknown> {
  const { jti: _jti, ...rest } = payload;
  if (model === 'Interaction' && rest.session && typeof rest.session === 'object') {
    // The interaction keeps a copy of the session cookie value that nothing reads.
    const { cookie: _cookie, ...session } = rest.session as Record<string, unknown>;
    rest.session = session;
  }
  return rest;
}

/** A row as a later read in the same unit sees it: its payload parsed from the saved JSON on first access. */
function readBack(json: string, consumedAt: Date | null): StoredRow {
  let payload: Record<string, unknown> | undefined;
  return {
    get payload() {
      return (payload ??= JSON.parse(json) as Record<string, unknown>);
    },
    consumed_at: consumedAt,
  };
}

export class PostgresAdapter {
  constructor(
    private readonly model: string,
    private readonly options: AdapterOptions,
  ) {}

  private get db(): Db {
    return this.options.db;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const expiresAt = typeof expiresIn === 'number' ? new Date(Date.now() + expiresIn * 1000) : null;
    const row: NewModelRow = {
      environment: this.options.environment,
      model: this.model,
      id: hashId(id),
      payload: JSON.stringify(sanitise(this.model, payload)),
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: expiresAt,
    };
    const unit = this.unitDeferring('saves');
    if (unit) {
      const key = `${this.model}:${row.id}`;
      unit.write(key, { op: 'upsert', row });
      // Read back as the database would give it: JSON, consumed_at kept (an upsert does not reset it).
      // Parsed when first read: most saved rows (a refresh's new tokens) are never read again in the request.
      const previous = unit.rows.get(key);
      unit.rows.set(key, readBack(row.payload, previous?.consumed_at ?? null));
      if (this.model === 'Session' && row.uid) unit.sessionsByUid.set(row.uid, key);
      return;
    }
    await upsertModel(this.db, row);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.read(hashId(id));
    if (!row) return undefined;
    const grace = this.model === 'RefreshToken' ? (this.options.refreshGraceSeconds ?? 0) : 0;
    const consumed = row.consumed_at && !(grace > 0 && Date.now() - row.consumed_at.getTime() <= grace * 1000);
    return { ...row.payload, jti: id, ...(consumed ? { consumed: Math.floor(row.consumed_at!.getTime() / 1000) } : {}) };
  }

  private async read(hashedId: string): Promise<StoredRow | undefined> {
    const unit = unitForAdapter();
    if (unit) return readInUnit(this.db, this.options.environment, unit, this.model, hashedId);
    return findModel(this.db, this.options.environment, this.model, hashedId);
  }

  /** The request's unit, when its plan defers this kind of write of this model. */
  private unitDeferring(kind: 'saves' | 'deletes' | 'consumes'): UnitOfWork | undefined {
    const unit = unitForAdapter();
    return unit?.plan[kind].has(this.model) ? unit : undefined;
  }

  /**
   * Writes what a browser request has pending before a write its unit does not defer, so
   * writes keep their order. A token request's pending tokens wait for its consume instead.
   */
  private async flushUnit(): Promise<void> {
    const unit = unitForAdapter();
    if (unit?.plan.kind === 'browser' && unit.writes.size > 0) await writeModels(this.db, unit.take());
  }

  /** Sessions by uid. The raw session id is not stored, so the result carries no jti. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const unit = this.unitDeferring('saves');
    const known = unit?.sessionsByUid.get(uid);
    if (unit && known !== undefined) {
      const row = known === null ? undefined : unit.rows.get(known);
      return row ? { ...row.payload } : undefined;
    }
    const row = await findModelByUid(this.db, this.options.environment, this.model, uid);
    return row ? { ...row.payload } : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined; // device flow is disabled
  }

  async consume(id: string): Promise<void> {
    const unit = this.unitDeferring('consumes');
    if (unit && !unit.consume) {
      unit.consume = { model: this.model, id: hashId(id) };
      return;
    }
    await this.flushUnit();
    if (await consumeModel(this.db, this.options.environment, this.model, hashId(id))) return;
    await consumeConflict(this.options, this.model, hashId(id));
    throw alreadyUsed(this.model);
  }

  async destroy(id: string): Promise<void> {
    const unit = this.unitDeferring('deletes');
    if (unit) {
      const key = `${this.model}:${hashId(id)}`;
      unit.write(key, { op: 'delete', environment: this.options.environment, model: this.model, id: hashId(id) });
      unit.rows.set(key, null);
      return;
    }
    await this.flushUnit();
    // A refresh token is destroyed when revoked (RFC 7009) or replayed: it leaves a marker.
    if (this.model === 'RefreshToken') return deleteToken(this.db, this.options.environment, this.model, hashId(id));
    await deleteModel(this.db, this.options.environment, this.model, hashId(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.flushUnit();
    await deleteGrantTokens(this.db, this.options.environment, [this.model], grantId);
  }
}

/** A lost race to consume: the conflict handler decides whether it ends the authorization. */
export async function consumeConflict(options: AdapterOptions, model: string, hashedId: string): Promise<void> {
  const row = await findConsumeState(options.db, options.environment, model, hashedId);
  await options.onConsumeConflict?.(model, row?.grant_id ?? undefined, row?.consumed_at ?? new Date());
}

export function alreadyUsed(model: string): InstanceType<typeof errors.InvalidGrant> {
  // In the library's words for a used refresh token (grant-refusals.ts explains both).
  return new errors.InvalidGrant(model === 'RefreshToken' ? GRANT_ERROR_DETAILS.refreshUsed : GRANT_ERROR_DETAILS.codeUsed);
}

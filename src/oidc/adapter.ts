import { errors } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { consumeModel, deleteModel, findConsumeState, findModel, findModelByUid, hashId, upsertModel, writeModels, type NewModelRow, type StoredRow } from '../db/provider-store.js';
import { currentRequestUnit, DEFERRED_IN_REQUEST, type RequestUnit } from './request-unit.js';
import { readRequestState } from './request-state-repository.js';
import { currentTokenUnit } from './token-unit.js';
import { prefetchToken } from './token-prefetch.js';
import { deleteGrantTokens, deleteToken } from './revoked-tokens-repository.js';

/**
 * oidc-provider's storage contract over one Postgres table (oidc_models), one adapter per
 * model and environment. Ids are stored as SHA-256 hashes and the raw id (the token, code or
 * session cookie value) is stripped from the payload, so the table yields no credential.
 * `consume` is a conditional update, so two concurrent uses of one code or refresh token
 * cannot both succeed. Inside the token endpoint, reads and writes of the request's tokens go
 * through its TokenUnit (token-unit.ts): one read, one commit. The queries are in
 * db/provider-store.ts, which the resource gateway reads access tokens through as well.
 */

/** Models whose consume and creation the token endpoint defers to its single write. */
const DEFERRED = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode']);
/** Models read together with their Grant and authorization at the token and introspection endpoints. */
const PREFETCHED = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode']);

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
    const unit = DEFERRED.has(this.model) ? currentTokenUnit() : undefined;
    if (unit) {
      unit.inserts.push({ model: this.model, id: row.id, payload: row.payload, grantId: row.grant_id, uid: row.uid, expiresAt });
      return;
    }
    const request = this.requestUnit();
    if (request) {
      const key = `${this.model}:${row.id}`;
      request.write(key, { op: 'upsert', row });
      // Read back as the database would give it: JSON, consumed_at kept (an upsert does not reset it).
      const previous = request.rows.get(key);
      request.rows.set(key, { payload: JSON.parse(row.payload) as Record<string, unknown>, consumed_at: previous?.consumed_at ?? null });
      if (this.model === 'Session' && row.uid) request.sessionsByUid.set(row.uid, key);
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
    const key = `${this.model}:${hashedId}`;
    const unit = currentTokenUnit();
    if (unit) {
      if (PREFETCHED.has(this.model)) return prefetchToken(this.options.db, this.options.environment, unit, this.model, hashedId);
      if (unit.rows.has(key)) return unit.rows.get(key) ?? undefined;
    }
    const request = this.requestUnit();
    if (!request) return findModel(this.db, this.options.environment, this.model, hashedId);
    if (request.rows.has(key)) return request.rows.get(key) ?? undefined;
    const row = this.model === 'Interaction' ? await this.readInteraction(request, hashedId) : await findModel(this.db, this.options.environment, this.model, hashedId);
    // A write of this row that landed in the unit meanwhile is the newer state.
    if (!request.rows.has(key)) request.rows.set(key, row ?? null);
    const uid = this.model === 'Session' ? row?.payload.uid : undefined;
    if (typeof uid === 'string' && !request.sessionsByUid.has(uid)) request.sessionsByUid.set(uid, key);
    return request.rows.get(key) ?? undefined;
  }

  /**
   * An Interaction the request's first read did not cover, read as the first read reads one:
   * with its Session (the provider checks the one against the other next) and what it leads to.
   */
  private async readInteraction(request: RequestUnit, hashedId: string): Promise<StoredRow | undefined> {
    const ids = { interaction: hashedId, session: null };
    request.remember(ids, await readRequestState(this.db, this.options.environment, ids));
    return request.rows.get(`Interaction:${hashedId}`) ?? undefined;
  }

  /** The request's unit, when this model's writes are deferred to it. */
  private requestUnit(): RequestUnit | undefined {
    return DEFERRED_IN_REQUEST.has(this.model) ? currentRequestUnit() : undefined;
  }

  /** Writes what the request has pending before a write the unit does not defer, so writes keep their order. */
  private async flushRequest(): Promise<void> {
    const request = currentRequestUnit();
    if (request && request.writes.size > 0) await writeModels(this.db, request.take());
  }

  /** Sessions by uid. The raw session id is not stored, so the result carries no jti. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const request = this.requestUnit();
    const known = request?.sessionsByUid.get(uid);
    if (request && known !== undefined) {
      const row = known === null ? undefined : request.rows.get(known);
      return row ? { ...row.payload } : undefined;
    }
    const row = await findModelByUid(this.db, this.options.environment, this.model, uid);
    return row ? { ...row.payload } : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined; // device flow is disabled
  }

  async consume(id: string): Promise<void> {
    const unit = DEFERRED.has(this.model) ? currentTokenUnit() : undefined;
    if (unit && !unit.consume) {
      unit.consume = { model: this.model, id: hashId(id) };
      return;
    }
    await this.flushRequest();
    if (await consumeModel(this.db, this.options.environment, this.model, hashId(id))) return;
    await consumeConflict(this.options, this.model, hashId(id));
    throw alreadyUsed(this.model);
  }

  async destroy(id: string): Promise<void> {
    const request = this.requestUnit();
    if (request) {
      const key = `${this.model}:${hashId(id)}`;
      request.write(key, { op: 'delete', environment: this.options.environment, model: this.model, id: hashId(id) });
      request.rows.set(key, null);
      return;
    }
    await this.flushRequest();
    // A refresh token is destroyed when revoked (RFC 7009) or replayed: it leaves a marker.
    if (this.model === 'RefreshToken') return deleteToken(this.db, this.options.environment, this.model, hashId(id));
    await deleteModel(this.db, this.options.environment, this.model, hashId(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.flushRequest();
    await deleteGrantTokens(this.db, this.options.environment, [this.model], grantId);
  }
}

/** A lost race to consume: the conflict handler decides whether it ends the authorization. */
export async function consumeConflict(options: AdapterOptions, model: string, hashedId: string): Promise<void> {
  const row = await findConsumeState(options.db, options.environment, model, hashedId);
  await options.onConsumeConflict?.(model, row?.grant_id ?? undefined, row?.consumed_at ?? new Date());
}

export function alreadyUsed(model: string): InstanceType<typeof errors.InvalidGrant> {
  return new errors.InvalidGrant(`${model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
}

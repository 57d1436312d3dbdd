import { sql } from 'kysely';
import { errors } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { hashId } from '../db/token-hash.js';
import { currentTokenUnit, prefetchToken, type StoredRow } from './token-unit.js';
import { deleteGrantTokens, deleteToken } from './revoked-tokens.js';

/**
 * oidc-provider's storage contract over one Postgres table (oidc_models), one adapter per
 * model and environment. Ids are stored as SHA-256 hashes and the raw id (the token, code or
 * session cookie value) is stripped from the payload, so the table yields no credential.
 * `consume` is a conditional update, so two concurrent uses of one code or refresh token
 * cannot both succeed. Inside the token endpoint, reads and writes of the request's tokens go
 * through its TokenUnit (token-unit.ts): one read, one commit.
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

  private where() {
    return this.db.selectFrom('oidc_models').where('environment', '=', this.options.environment).where('model', '=', this.model);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const expiresAt = typeof expiresIn === 'number' ? new Date(Date.now() + expiresIn * 1000) : null;
    const row = {
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
    await this.db
      .insertInto('oidc_models')
      .values(row)
      .onConflict((oc) => oc.columns(['environment', 'model', 'id']).doUpdateSet({ payload: row.payload, grant_id: row.grant_id, uid: row.uid, expires_at: row.expires_at }))
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.read(hashId(id));
    if (!row) return undefined;
    const grace = this.model === 'RefreshToken' ? (this.options.refreshGraceSeconds ?? 0) : 0;
    const consumed = row.consumed_at && !(grace > 0 && Date.now() - row.consumed_at.getTime() <= grace * 1000);
    return { ...row.payload, jti: id, ...(consumed ? { consumed: Math.floor(row.consumed_at!.getTime() / 1000) } : {}) };
  }

  private async read(hashedId: string): Promise<StoredRow | undefined> {
    const unit = currentTokenUnit();
    if (unit) {
      if (PREFETCHED.has(this.model)) return prefetchToken(this.options.db, this.options.environment, unit, this.model, hashedId);
      const key = `${this.model}:${hashedId}`;
      if (unit.rows.has(key)) return unit.rows.get(key) ?? undefined;
    }
    return this.where().select(['payload', 'consumed_at']).where('id', '=', hashedId).executeTakeFirst();
  }

  /** Sessions by uid. The raw session id is not stored, so the result carries no jti. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.where().select(['payload', 'consumed_at']).where('uid', '=', uid).executeTakeFirst();
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
    const updated = await this.db
      .updateTable('oidc_models')
      .set({ consumed_at: sql<Date>`now()` })
      .where('environment', '=', this.options.environment)
      .where('model', '=', this.model)
      .where('id', '=', hashId(id))
      .where('consumed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (updated) return;
    await consumeConflict(this.options, this.model, hashId(id));
    throw alreadyUsed(this.model);
  }

  async destroy(id: string): Promise<void> {
    // A refresh token is destroyed when revoked (RFC 7009) or replayed: it leaves a marker.
    if (this.model === 'RefreshToken') return deleteToken(this.db, this.options.environment, this.model, hashId(id));
    await this.db.deleteFrom('oidc_models').where('environment', '=', this.options.environment).where('model', '=', this.model).where('id', '=', hashId(id)).execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteGrantTokens(this.db, this.options.environment, [this.model], grantId);
  }
}

/** A lost race to consume: the conflict handler decides whether it ends the authorization. */
export async function consumeConflict(options: AdapterOptions, model: string, hashedId: string): Promise<void> {
  const row = await options.db
    .selectFrom('oidc_models')
    .select(['grant_id', 'consumed_at'])
    .where('environment', '=', options.environment)
    .where('model', '=', model)
    .where('id', '=', hashedId)
    .executeTakeFirst();
  await options.onConsumeConflict?.(model, row?.grant_id ?? undefined, row?.consumed_at ?? new Date());
}

export function alreadyUsed(model: string): InstanceType<typeof errors.InvalidGrant> {
  return new errors.InvalidGrant(`${model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
}

/** Deletes expired rows in batches; expired rows are kept a day so late lookups can explain themselves. */
export async function sweepExpired(db: Db, batchSize = 1000, graceSeconds = 86_400): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql<{ count: string }>`
      with doomed as (
        select environment, model, id from oidc_models
        where expires_at < now() - make_interval(secs => ${graceSeconds})
        limit ${batchSize}
      )
      delete from oidc_models m using doomed d
      where m.environment = d.environment and m.model = d.model and m.id = d.id`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

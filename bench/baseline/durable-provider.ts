/**
 * The durable peer of the token-endpoint scenarios: what a team would run instead of Almoner.
 * The same bare oidc-provider as bench/baseline/bare-provider.ts (bench/lib/bare-oidc.ts, the
 * same settings), on a Postgres adapter written the way the library's example adapters are:
 * one table for every model, the payload as jsonb beside the columns the adapter looks rows
 * up by, one query per adapter call through a `pg` pool, nothing cached.
 *
 * Environment: DATABASE_URL (a database of its own; the harness creates and drops it; the
 * table is created here on start), POOL_MAX (default 10, Almoner's database_pool_max), and
 * PORT, ADMIN_PORT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI (bench/lib/bare-oidc.ts). The
 * admin port also answers GET /poke (one `select 1` through the pool), which the harness uses
 * to make the pool's backends publish their statistics.
 *
 * Run: node --import tsx bench/baseline/durable-provider.ts
 */
import type { Adapter, AdapterPayload, Configuration } from 'oidc-provider';
import pg from 'pg';
import { serveBareProvider } from '../lib/bare-oidc.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  application_name: 'almoner-bench-peer',
});

// Run once at start, as an example adapter's connect() would. The primary key answers find,
// consume and destroy; grant_id is indexed for revokeByGrantId; uid (sessions, interactions)
// and user_code (device codes) only where a model sets them.
await pool.query(`
  create table if not exists oidc_payloads (
    id text not null,
    type text not null,
    payload jsonb not null,
    grant_id text,
    uid text,
    user_code text,
    expires_at timestamptz,
    consumed_at timestamptz,
    primary key (id, type)
  );
  create index if not exists oidc_payloads_grant_id on oidc_payloads (grant_id);
  create index if not exists oidc_payloads_uid on oidc_payloads (uid) where uid is not null;
  create index if not exists oidc_payloads_user_code on oidc_payloads (user_code) where user_code is not null;
`);

interface Row {
  payload: AdapterPayload;
  consumed_at: Date | null;
}

const LIVE = '(expires_at is null or expires_at > now())';

/** One instance per model (AccessToken, RefreshToken, Grant, Session, …): `type` is the model's name. */
class PostgresAdapter implements Adapter {
  constructor(private readonly type: string) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    await pool.query(
      `insert into oidc_payloads (id, type, payload, grant_id, uid, user_code, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7)
       on conflict (id, type) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
         user_code = excluded.user_code, expires_at = excluded.expires_at`,
      [
        id,
        this.type,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.uid ?? null,
        payload.userCode ?? null,
        expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      ],
    );
  }

  private async findBy(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
    const { rows } = await pool.query<Row>(
      `select payload, consumed_at from oidc_payloads where ${column} = $1 and type = $2 and ${LIVE} limit 1`,
      [value, this.type],
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.findBy('id', id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findBy('uid', uid);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findBy('user_code', userCode);
  }

  async consume(id: string): Promise<void> {
    await pool.query('update oidc_payloads set consumed_at = now() where id = $1 and type = $2', [id, this.type]);
  }

  async destroy(id: string): Promise<void> {
    await pool.query('delete from oidc_payloads where id = $1 and type = $2', [id, this.type]);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await pool.query('delete from oidc_payloads where grant_id = $1 and type = $2', [grantId, this.type]);
  }
}

await serveBareProvider({
  adapter: PostgresAdapter as unknown as Configuration['adapter'],
  admin: { '/poke': () => pool.query('select 1').then(() => []) },
  close: () => pool.end(),
});

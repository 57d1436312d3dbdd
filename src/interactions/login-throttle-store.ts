import { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.js';

/** The table the migration 20261122000300_login_throttle creates. */
export const THROTTLE_TABLE = 'login_throttle';

interface PgQuery {
  text: string;
  values?: unknown[];
}

/**
 * rate-limiter-flexible's RateLimiterPostgres talks to a `pg` pool (`query({text, values})`
 * → `{rows, rowCount}`). This gives it one over our Kysely instance, so the limiter shares
 * the application's pool, statement timeout and outage handling instead of opening its own.
 * The limiter writes only the login_throttle table, whose SQL it owns.
 */
export function throttleStoreClient(db: Db) {
  return {
    async query(q: PgQuery) {
      const result = await db.executeQuery(CompiledQuery.raw(q.text, q.values ?? []));
      const rows = result.rows as Record<string, unknown>[];
      return { rows, rowCount: rows.length > 0 ? rows.length : Number(result.numAffectedRows ?? 0) };
    },
  };
}

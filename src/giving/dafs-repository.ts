import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { DafsTable } from '../db/schema-giving.js';

export type DafRow = Selectable<DafsTable>;

/** A DAF is supported (integrated) when it is a fund provider on Almoner, or the sandbox's simulated one. */
export function isSupported(row: Pick<DafRow, 'fund_provider_id' | 'simulated'>): boolean {
  return row.fund_provider_id !== null || row.simulated;
}

/** Where a DAF page ends: the last row's name and id (the list is in name order). */
export interface DafCursor {
  name: string;
  id: string;
}

export interface DafFilters {
  supportedOnly?: boolean;
  /** Case-insensitive: names containing it. */
  query?: string;
}

/** The DAFs of an environment in name order, one more than `limit` so the caller can tell whether another page follows. */
export function listDafs(db: Executor, environment: Environment, filters: DafFilters, cursor: DafCursor | undefined, limit: number) {
  let query = db
    .selectFrom('dafs')
    .selectAll()
    .where((eb) => eb.or([eb('environment', 'is', null), eb('environment', '=', environment)]));
  if (filters.supportedOnly) query = query.where((eb) => eb.or([eb('fund_provider_id', 'is not', null), eb('simulated', '=', true)]));
  if (filters.query) {
    const pattern = `%${filters.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where('search_name', 'like', pattern);
  }
  if (cursor) query = query.where(sql<boolean>`(org_name, id) > (${cursor.name}, ${cursor.id}::uuid)`);
  return query
    .orderBy('org_name')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

/** One DAF of the environment, or undefined (an id that is not a UUID is unknown too). */
export function findDaf(db: Executor, environment: Environment, id: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return Promise.resolve(undefined);
  return db
    .selectFrom('dafs')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('environment', 'is', null), eb('environment', '=', environment)]))
    .executeTakeFirst();
}

import fs from 'node:fs';
import path from 'node:path';
import { recordedPgdata } from '../../src/embedded-postgres/location.js';
import { stopPostmasterSync } from './leftover-postgres.js';

/**
 * As root, a data directory the `postgres` user cannot reach gets its PGDATA under
 * /var/lib/almoner/clusters/<hash>/ (src/embedded-postgres/location.ts). Removing such a data
 * directory must remove that PGDATA too, or test runs would pile them up there.
 */

/** The relocated PGDATA's parent directory of `dataDir` (…/clusters/<hash>), if it has one. */
export function relocatedDirOf(dataDir: string): string | undefined {
  const pgdata = recordedPgdata(path.resolve(dataDir));
  if (!pgdata || path.basename(pgdata) !== 'pg') return undefined;
  const relocatedDir = path.dirname(pgdata);
  // Only ever a <root>/clusters/<hash> directory: a hand-edited record must not aim rm -r elsewhere.
  return path.basename(path.dirname(relocatedDir)) === 'clusters' ? relocatedDir : undefined;
}

/**
 * Removes the relocated PGDATA of `dataDir` (synchronous: also used from an exit hook). A
 * postmaster still running in `dataDir`'s PGDATA, relocated or not, is stopped first: the
 * directory is about to go, and a postmaster without its directory would run on unseen.
 * Callers that can stop it properly (stopOrphanPostgres) do so before.
 */
export function removeRelocatedPgdata(dataDir: string): void {
  stopPostmasterSync(dataDir);
  const relocatedDir = relocatedDirOf(dataDir);
  if (!relocatedDir) return;
  fs.rmSync(relocatedDir, { recursive: true, force: true });
}

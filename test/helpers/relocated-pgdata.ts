import fs from 'node:fs';
import path from 'node:path';
import { recordedPgdata } from '../../src/embedded-postgres/location.js';

/**
 * As root, a data directory the `postgres` user cannot reach gets its cluster under
 * /var/lib/almoner/clusters/<hash>/ (src/embedded-postgres/location.ts). Removing such a data
 * directory must remove that cluster too, or test runs would pile them up there.
 */

/** The relocated cluster's directory of `dataDir` (…/clusters/<hash>), if it has one. */
export function relocatedClusterOf(dataDir: string): string | undefined {
  const pgdata = recordedPgdata(path.resolve(dataDir));
  if (!pgdata || path.basename(pgdata) !== 'pg') return undefined;
  const clusterDir = path.dirname(pgdata);
  // Only ever a <root>/clusters/<hash> directory: a hand-edited record must not aim rm -r elsewhere.
  return path.basename(path.dirname(clusterDir)) === 'clusters' ? clusterDir : undefined;
}

/**
 * Removes the relocated cluster of `dataDir` (synchronous: also used from an exit hook). A
 * postmaster still running there is killed first; callers that can stop it properly
 * (stopOrphanCluster) do so before.
 */
export function removeRelocatedCluster(dataDir: string): void {
  const clusterDir = relocatedClusterOf(dataDir);
  if (!clusterDir) return;
  try {
    const pid = Number(fs.readFileSync(path.join(clusterDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGKILL');
  } catch {
    // no pid file, or the postmaster is gone
  }
  fs.rmSync(clusterDir, { recursive: true, force: true });
}

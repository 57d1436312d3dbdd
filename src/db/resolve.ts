import type { AppConfig } from '../config/schema.js';
import { openEmbeddedCluster, type OpenOptions } from '../embedded-postgres/server.js';

export interface DatabaseLocation {
  url: string;
  /** Human description for banners and logs; never contains a password. */
  description: string;
  embedded: boolean;
  release(): Promise<void>;
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable database URL)';
  }
}

/** DATABASE_URL when set; otherwise the embedded cluster in the data directory. */
export async function resolveDatabase(
  config: Pick<AppConfig, 'database_url' | 'data_dir'>,
  stopWhenUnused: OpenOptions['stopWhenUnused'],
  log?: (message: string) => void,
): Promise<DatabaseLocation> {
  if (config.database_url) {
    return { url: config.database_url, description: redactUrl(config.database_url), embedded: false, release: async () => undefined };
  }
  const cluster = await openEmbeddedCluster({ dataDir: config.data_dir, stopWhenUnused, log });
  return {
    url: cluster.url,
    description: cluster.relocatedFrom
      ? `embedded PostgreSQL 17 on 127.0.0.1:${cluster.port} (data in ${cluster.pgdata}, outside ${cluster.relocatedFrom}, which the "postgres" OS user cannot reach)`
      : `embedded PostgreSQL 17 on 127.0.0.1:${cluster.port} (data in ${cluster.pgdata})`,
    embedded: true,
    release: () => cluster.release(),
  };
}

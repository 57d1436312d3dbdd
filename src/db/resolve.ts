import type { AppConfig } from '../config/schema.js';
import { openEmbeddedPostgres, type OpenOptions } from '../embedded-postgres/server.js';

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

/** DATABASE_URL when set; otherwise the embedded PostgreSQL of the data directory (src/embedded-postgres/). */
export async function resolveDatabase(
  config: Pick<AppConfig, 'database_url' | 'data_dir'>,
  stopWhenUnused: OpenOptions['stopWhenUnused'],
  log?: (message: string) => void,
): Promise<DatabaseLocation> {
  if (config.database_url) {
    return { url: config.database_url, description: redactUrl(config.database_url), embedded: false, release: async () => undefined };
  }
  const embedded = await openEmbeddedPostgres({ dataDir: config.data_dir, stopWhenUnused, log });
  return {
    url: embedded.url,
    description: embedded.relocatedFrom
      ? `embedded PostgreSQL 17 on 127.0.0.1:${embedded.port} (data in ${embedded.pgdata}, outside ${embedded.relocatedFrom}, which the "postgres" OS user cannot reach)`
      : `embedded PostgreSQL 17 on 127.0.0.1:${embedded.port} (data in ${embedded.pgdata})`,
    embedded: true,
    release: () => embedded.release(),
  };
}

import fs from 'node:fs';
import path from 'node:path';
import type { AppConfig } from '../config/schema.js';
import type { ListenAddress } from './listeners.js';

/**
 * `ready_file` (ALMONER_READY_FILE): once every listener is bound, the server writes where it
 * can be reached as one JSON object, for scripts and test harnesses (the banner is for people,
 * and there is none in production). With port 0 in a URL it is how a launcher learns the port.
 */
export interface ReadyRecord {
  pid: number;
  profile: AppConfig['profile'];
  /** The four public URLs as served (a port-0 URL with its bound port). */
  urls: Pick<AppConfig, 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'>;
  listening: ListenAddress[];
  metrics_listening: ListenAddress | null;
}

/** Written under another name and renamed, so a reader never sees half of it. */
export function writeReadyFile(file: string, record: ReadyRecord): void {
  const staging = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(staging, `${JSON.stringify(record)}\n`);
    fs.renameSync(staging, file);
  } catch (error) {
    fs.rmSync(staging, { force: true });
    throw new Error(`cannot write ready_file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Removed at shutdown: a ready file that exists describes a running server (or one that crashed). */
export function removeReadyFile(file: string): void {
  fs.rmSync(file, { force: true });
}

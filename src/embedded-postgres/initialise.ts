import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Binaries, PgdataLocation } from './location.js';
import { EmbeddedPostgresError, isAlive, runTool, type RunAs } from './tools.js';

/**
 * Making a cluster for the embedded PostgreSQL (server.ts): initdb into a staging directory,
 * its credentials file, and the sweep of what initialisations that never finished left.
 */

export const SUPERUSER = 'postgres';

export interface Credentials {
  password: string;
  port?: number;
  /** The PGDATA, recorded only when it lives outside the data directory. */
  pgdata?: string;
}

/** What an initialisation leaves beside PGDATA and the credentials file until it is done: `<prefix><pid>-<random>`. */
function leftoverPatterns(pgdata: string, credentialsFile: string): { dir: string; pattern: RegExp }[] {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [
    { dir: path.dirname(pgdata), pattern: new RegExp(`^${escape(path.basename(pgdata))}\\.init-(\\d+)-[0-9a-f]+$`) },
    { dir: path.dirname(pgdata), pattern: /^\.pwfile-(\d+)-[0-9a-f]+$/ },
    { dir: path.dirname(credentialsFile), pattern: new RegExp(`^${escape(path.basename(credentialsFile))}\\.(\\d+)-[0-9a-f]+$`) },
  ];
}

/**
 * Removes what initialisations of processes no longer alive left behind (a `kill -9` during
 * initdb; a signal is handled by initialise itself). A live process's staging is its own.
 */
export function removeDeadLeftovers(pgdata: string, credentialsFile: string, log: (m: string) => void): void {
  for (const { dir, pattern } of leftoverPatterns(pgdata, credentialsFile)) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(pattern.exec(name)?.[1] ?? NaN);
      if (!Number.isInteger(pid) || isAlive(pid)) continue;
      log(`removing ${path.join(dir, name)}, left by an initialisation that did not finish (pid ${pid})`);
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    }
  }
}

/**
 * initdb into a staging directory beside `pgdata`, then renames it into place. The password
 * file sits beside it too, where the `postgres` user can read it (the data directory itself
 * may be out of its reach when PGDATA was relocated). Interrupted (`signal`), initdb is
 * stopped and the staging directory and password file go with it: PGDATA never exists
 * half-made, so the next start initialises again.
 */
export async function initialise(
  bins: Binaries,
  location: PgdataLocation,
  credentialsFile: string,
  runAs: RunAs,
  log: (m: string) => void,
  signal?: AbortSignal,
) {
  const { pgdata } = location;
  log(`initialising an embedded PostgreSQL cluster in ${pgdata}`);
  // The pid tells a later start whether the process that made them is gone (removeDeadLeftovers).
  const suffix = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const staging = `${pgdata}.init-${suffix}`;
  const pwfile = path.join(path.dirname(pgdata), `.pwfile-${suffix}`);
  const credentials: Credentials = {
    password: crypto.randomBytes(24).toString('base64url'),
    ...(location.relocatedFrom ? { pgdata } : {}),
  };
  fs.mkdirSync(staging, { mode: 0o700 });
  fs.writeFileSync(pwfile, `${credentials.password}\n`, { mode: 0o600 });
  try {
    if (runAs.uid !== undefined) {
      fs.chownSync(staging, runAs.uid, runAs.gid!);
      fs.chownSync(pwfile, runAs.uid, runAs.gid!);
    }
    await runTool(
      bins.initdb,
      ['-D', staging, '-U', SUPERUSER, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'],
      runAs,
      signal,
    );
    fs.writeFileSync(`${credentialsFile}.${suffix}`, JSON.stringify(credentials), { mode: 0o600 });
    try {
      // Atomic hand-over: if another process initialised concurrently, its PGDATA wins.
      fs.renameSync(staging, pgdata);
      fs.renameSync(`${credentialsFile}.${suffix}`, credentialsFile);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true });
      fs.rmSync(`${credentialsFile}.${suffix}`, { force: true });
    }
  } finally {
    fs.rmSync(pwfile, { force: true });
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

export function readCredentials(file: string, location: PgdataLocation): Credentials {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Credentials;
    if (typeof parsed.password !== 'string') throw new Error('no password');
    return parsed;
  } catch (error) {
    const afresh = location.relocatedFrom
      ? `remove the cluster left in ${path.dirname(location.pgdata)} (rm -r) to start afresh`
      : 'move the data directory aside to start afresh';
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL credentials file ${file} is missing or unreadable (${(error as Error).message}); restore it, or ${afresh}`,
    );
  }
}

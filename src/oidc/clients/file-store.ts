import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ClientRegistryError, parseClientsDocument, type ClientEntry } from './schema.js';

/**
 * The clients file (clients_file, ./config/clients.json by default): the registry's source of
 * truth. Every message names it by the full path the caller resolved, then a colon. Writes
 * are atomic (temp file + rename) and serialised between admin processes with a lock file.
 */
export interface ClientsSnapshot {
  entries: ClientEntry[];
  /** SHA-256 of the file's bytes ('' when the file does not exist). */
  hash: string;
}

export function readClientsFile(file: string): ClientsSnapshot {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], hash: '' };
    throw new ClientRegistryError([`${file}: cannot be read (${(error as Error).message})`]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ClientRegistryError([`${file}: is not valid JSON (${(error as Error).message})`]);
  }
  return { entries: parseClientsDocument(document, file), hash: crypto.createHash('sha256').update(text).digest('hex') };
}

function writeAtomically(file: string, entries: readonly ClientEntry[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify({ clients: entries }, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
}

async function withLock<T>(file: string, fn: () => Promise<T> | T): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock older than 30 s belongs to a process that died while holding it.
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 30_000) fs.rmSync(lock, { force: true });
      } catch {
        /* raced with its removal */
      }
      if (Date.now() > deadline) throw new ClientRegistryError([`${file}: locked by another admin command (lock file ${lock})`]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/**
 * Read, change and write the file under the lock; the change may throw to abort. `publish`
 * runs under the same lock, so overlapping admin commands update the database in the
 * order they wrote the file.
 */
export function updateClientsFile(file: string, change: (entries: ClientEntry[]) => ClientEntry[], publish?: (entries: ClientEntry[]) => Promise<void>): Promise<ClientEntry[]> {
  return withLock(file, async () => {
    const next = change(readClientsFile(file).entries);
    // Validate the whole document before it replaces the old one.
    parseClientsDocument({ clients: next }, file);
    writeAtomically(file, next);
    await publish?.(next);
    return next;
  });
}

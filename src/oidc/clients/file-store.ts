import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { formatPosition, JsonSyntaxError, scanJson, type JsonLayout } from './json-layout.js';
import { ClientRegistryError, parseClientsDocument, registryContentHash, type ClientEntry } from './schema.js';
import type { Profile } from '../../webhooks/targets.js';

/**
 * The clients file (clients_file, ./config/clients.json by default): the registry's source of
 * truth. Every message names it by the full path the caller resolved, then a colon, and
 * points at the line and column to fix. Writes are atomic (temp file + rename) and
 * serialised between admin processes with a lock file.
 */
export interface ClientsSnapshot {
  /** False when there is no file: no clients, and no registry to apply. */
  exists: boolean;
  entries: ClientEntry[];
  /** The registry revision the file declares (written by the admin commands; none in a hand-written file or a missing one). */
  revision: number | undefined;
  /** registryContentHash of the entries: what the file's registry is, whatever its formatting. */
  contentHash: string;
}

/** Reads and validates the file; `profile` is the deployment's (parseClientsDocument). */
export function readClientsFile(file: string, profile: Profile = 'production'): ClientsSnapshot {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { exists: false, entries: [], revision: undefined, contentHash: registryContentHash([]) };
    throw new ClientRegistryError([`${file}: cannot be read (${(error as Error).message})`]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ClientRegistryError([`${file}: ${syntaxProblem(text, error as Error)}`]);
  }
  let layout: JsonLayout | undefined;
  try {
    layout = scanJson(text);
  } catch {
    // JSON.parse read it, so the scanner's refusal (nesting past its depth) only costs the positions.
  }
  const { entries, revision } = parseClientsDocument(document, file, layout, profile);
  return { exists: true, entries, revision, contentHash: registryContentHash(entries) };
}

/** Where and why the text is not JSON: the scanner's place and words, else JSON.parse's message. */
function syntaxProblem(text: string, parseError: Error): string {
  try {
    scanJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return `${formatPosition(error.position)}: is not valid JSON (${error.message})`;
  }
  return `is not valid JSON (${parseError.message})`;
}

function writeAtomically(file: string, entries: readonly ClientEntry[], revision: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify({ revision, clients: entries }, null, 2)}\n`, { mode: 0o600 });
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
 * Runs `fn` under the file's lock with what the file holds and a writer that validates the
 * whole document before it replaces the old one, so overlapping admin commands change the
 * file and the database in one order.
 */
export function updateClientsFile<T>(
  file: string,
  fn: (current: ClientsSnapshot, write: (entries: readonly ClientEntry[], revision: number) => void) => Promise<T>,
  profile: Profile = 'production',
): Promise<T> {
  return withLock(file, () =>
    fn(readClientsFile(file, profile), (entries, revision) => {
      parseClientsDocument({ clients: entries }, file, undefined, profile);
      writeAtomically(file, entries, revision);
    }),
  );
}

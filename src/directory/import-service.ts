import fs from 'node:fs';
import { CsvError, parse, type Info } from 'csv-parse';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { DomainError } from '../errors/domain-error.js';
import { BmfLayoutError, bmfRecord, headerPositions, type BmfColumn, type DirectoryRecord } from './bmf-layout.js';
import { deferDirectoryWords, recountDirectoryWords, upsertDirectoryBatch } from './repository.js';

/**
 * Importing an IRS EO BMF CSV file into the directory (docs/directory.md, "Importing"): the file
 * is streamed, never held whole (the IRS's files run to hundreds of thousands of rows), and
 * written in batches inside one transaction, so a bad line anywhere rolls back everything
 * before it: a file goes in whole or not at all.
 */

export interface ImportCounts {
  /** Organizations read (records after the header). */
  read: number;
  inserted: number;
  updated: number;
  /** Already in the directory exactly as the file has them. */
  unchanged: number;
}

/** Rows per statement: 1,000 keeps a statement's arrays small and the round trips few. */
const BATCH_SIZE = 1_000;

function refused(file: string, line: number | undefined, reason: string): DomainError {
  return new DomainError('unprocessable', `${file}${line ? `: line ${line}` : ''}: ${reason}; nothing was imported`);
}

/** The line a record starts on: csv-parse counts to its end, and a quoted field may hold line breaks. */
function firstLine(fields: readonly string[], lastLine: number): number {
  let breaks = 0;
  for (const field of fields) if (field.includes('\n')) breaks += field.split('\n').length - 1;
  return lastLine - breaks;
}

async function assertReadable(file: string): Promise<void> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw new DomainError('invalid', `${file} is not a file`);
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('not_found', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/** Imports `file` (an absolute path) as source irs_bmf; re-importing the same file changes nothing. */
export async function importBmfFile(db: Db, file: string): Promise<ImportCounts> {
  await assertReadable(file);
  return inTransaction(db, async (trx) => {
    const counts: ImportCounts = { read: 0, inserted: 0, updated: 0, unchanged: 0 };
    // The names' words are counted once at the end, not per batch (docs/directory.md, "How search ranks").
    await deferDirectoryWords(trx);
    // EIN → the line it was on: one EIN twice in a file is two answers to one question.
    const lines = new Map<number, number>();
    let batch: DirectoryRecord[] = [];
    const flush = async () => {
      const written = await upsertDirectoryBatch(trx, batch, 'irs_bmf');
      counts.inserted += written.inserted;
      counts.updated += written.updated;
      counts.unchanged += batch.length - written.inserted - written.updated;
      batch = [];
    };

    const source = fs.createReadStream(file);
    const parser = parse({ info: true, bom: true, relax_column_count: true, skip_empty_lines: true });
    source.on('error', (error) => parser.destroy(error));
    source.pipe(parser);
    let layout: { at: Record<BmfColumn, number>; width: number } | undefined;
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: Info }>) {
        const line = firstLine(record, info.lines);
        try {
          if (!layout) {
            layout = { at: headerPositions(record), width: record.length };
            continue;
          }
          const row = bmfRecord(record, layout.at, layout.width);
          const key = Number(row.ein);
          const earlier = lines.get(key);
          if (earlier !== undefined) throw new BmfLayoutError(`EIN ${row.ein} is also on line ${earlier}`);
          lines.set(key, line);
          counts.read++;
          batch.push(row);
        } catch (error) {
          if (error instanceof BmfLayoutError) throw refused(file, line, error.message);
          throw error;
        }
        if (batch.length >= BATCH_SIZE) await flush();
      }
    } catch (error) {
      if (error instanceof CsvError) {
        const line = typeof error.lines === 'number' ? error.lines : undefined;
        throw refused(file, line, `not CSV (${error.message})`);
      }
      throw error;
    } finally {
      source.destroy();
    }
    if (!layout) throw refused(file, undefined, `the file is empty (the IRS EO BMF header row is expected)`);
    await flush();
    if (counts.inserted + counts.updated > 0) await recountDirectoryWords(trx);
    return counts;
  });
}

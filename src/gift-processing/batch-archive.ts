import type { Readable } from 'node:stream';
import yauzl from 'yauzl';

/**
 * A batch's ZIP, opened from a local file (docs/gift-processing.md, "The batch format"). Its
 * central directory is read and judged whole before any entry is: names, count, expanded size
 * and each entry's expansion ratio. yauzl's validateEntrySizes then holds every entry read to
 * the size the directory declared, so the judgement cannot be dodged by lying headers.
 */

/** Why a batch is refused whole: the index line when one is to blame (1 is the header), and the reason. */
export class BatchRefusal extends Error {
  constructor(
    readonly reason: string,
    readonly line: number | null = null,
  ) {
    super(line === null ? reason : `line ${line}: ${reason}`);
    this.name = 'BatchRefusal';
  }
}

export interface ArchiveLimits {
  maxEntries: number;
  maxExpandedBytes: number;
  /** No entry may expand beyond this many times its compressed size. */
  maxRatio: number;
}

/** The archive rules of docs/gift-processing.md, "The batch format". */
export const ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 20_000, maxExpandedBytes: 2 * 1024 ** 3, maxRatio: 200 };

export interface ArchiveEntry {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

function entryNameProblem(name: string): string | undefined {
  if (name.includes('\\')) return `the entry name ${JSON.stringify(name)} contains a backslash`;
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return `the entry name ${JSON.stringify(name)} is absolute`;
  // The format says "contain `..`", not only a `..` segment: a name like `a..b.tif` is refused too.
  if (name.includes('..')) return `the entry name ${JSON.stringify(name)} contains ..`;
  return undefined;
}

/** yauzl's own refusals of a name (strictFileNames) in the words of the format. */
function refusalOf(error: Error): BatchRefusal {
  const named = /^(?:invalid characters in fileName|absolute path|invalid relative path): (.*)$/s.exec(error.message);
  if (named) return new BatchRefusal(entryNameProblem(named[1]!) ?? `the entry name ${JSON.stringify(named[1])} is not allowed`);
  return new BatchRefusal(`the archive is not a valid ZIP (${error.message})`);
}

const OPTIONS: yauzl.Options = { lazyEntries: true, validateEntrySizes: true, strictFileNames: true, autoClose: false };

export class BatchArchive {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    private readonly byName: Map<string, yauzl.Entry>,
  ) {}

  /** Opens and judges the archive; a BatchRefusal when it is not a ZIP or breaks a rule. */
  static async open(file: string, limits: ArchiveLimits = ARCHIVE_LIMITS): Promise<BatchArchive> {
    const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(file, OPTIONS, (error, opened) => (error ? reject(new BatchRefusal('the upload is not a ZIP archive')) : resolve(opened))),
    );
    try {
      if (zip.entryCount > limits.maxEntries) {
        throw new BatchRefusal(`the archive holds ${zip.entryCount} entries (at most ${limits.maxEntries})`);
      }
      const byName = await readDirectory(zip, limits);
      return new BatchArchive(zip, byName);
    } catch (error) {
      zip.close();
      throw error;
    }
  }

  /** The file entries (directories left out), in the archive's order. */
  entries(): ArchiveEntry[] {
    return [...this.byName.values()].map((e) => ({
      name: e.fileName,
      compressedSize: e.compressedSize,
      uncompressedSize: e.uncompressedSize,
    }));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The entry's bytes as a stream (held to its declared size). */
  async stream(name: string): Promise<Readable> {
    const entry = this.byName.get(name);
    if (!entry) throw new BatchRefusal(`the archive has no entry ${JSON.stringify(name)}`);
    return new Promise<Readable>((resolve, reject) =>
      this.zip.openReadStream(entry, (error, stream) => (error ? reject(refusalOf(error)) : resolve(stream))),
    );
  }

  /** The entry's bytes, refused beyond `maxBytes` before a byte is read. */
  async read(name: string, maxBytes: number): Promise<Buffer> {
    const entry = this.byName.get(name);
    if (entry && entry.uncompressedSize > maxBytes) {
      throw new BatchRefusal(`the entry ${JSON.stringify(name)} is larger than ${maxBytes} bytes`);
    }
    const stream = await this.stream(name);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
    } catch (error) {
      throw new BatchRefusal(`the entry ${JSON.stringify(name)} could not be read (${(error as Error).message})`);
    }
    return Buffer.concat(chunks);
  }

  close(): void {
    this.zip.close();
  }
}

function readDirectory(zip: yauzl.ZipFile, limits: ArchiveLimits): Promise<Map<string, yauzl.Entry>> {
  return new Promise((resolve, reject) => {
    const byName = new Map<string, yauzl.Entry>();
    let expanded = 0;
    const fail = (refusal: BatchRefusal) => {
      zip.removeAllListeners('entry');
      reject(refusal);
    };
    zip.on('error', (error: Error) => fail(refusalOf(error)));
    zip.on('end', () => resolve(byName));
    zip.on('entry', (entry: yauzl.Entry) => {
      const problem = entryNameProblem(entry.fileName);
      if (problem) return fail(new BatchRefusal(problem));
      expanded += entry.uncompressedSize;
      if (expanded > limits.maxExpandedBytes) {
        return fail(new BatchRefusal(`the archive expands to more than ${limits.maxExpandedBytes} bytes`));
      }
      if (entry.uncompressedSize > limits.maxRatio * Math.max(entry.compressedSize, 1)) {
        return fail(
          new BatchRefusal(`the entry ${JSON.stringify(entry.fileName)} expands more than ${limits.maxRatio} times its compressed size`),
        );
      }
      if (!entry.fileName.endsWith('/')) {
        if (byName.has(entry.fileName)) return fail(new BatchRefusal(`the entry ${JSON.stringify(entry.fileName)} appears twice`));
        byName.set(entry.fileName, entry);
      }
      zip.readEntry();
    });
    zip.readEntry();
  });
}

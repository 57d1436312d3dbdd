import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { documentationFiles, fencedBlocks, includedFile, isRunnable } from './markdown.js';

/**
 * The documentation's example programs (docs/examples/) are shown whole where a document
 * explains them and run from there (docs/testing.md, "Runnable examples in the documentation"):
 * a listing (```js file=docs/examples/…) is the file byte for byte, every program is listed by
 * a document and run by one of its runnable blocks, so what a reader reads is what the test runs.
 */

const EXAMPLES = 'docs/examples';

const documents = documentationFiles().map((file) => ({
  file,
  blocks: fencedBlocks(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8')),
}));
const listings = documents.flatMap(({ file, blocks }) =>
  blocks.flatMap((block) => {
    const listed = includedFile(block);
    return listed ? [{ document: file, line: block.line, listed, body: block.body }] : [];
  }),
);
const programs = fs
  .readdirSync(path.join(PROJECT_ROOT, EXAMPLES))
  .sort()
  .map((name) => `${EXAMPLES}/${name}`);

describe('example programs in the documentation', () => {
  it('finds the listings (at least the bank-data walkthrough and the openid-client example)', () => {
    expect(listings.map((l) => l.listed)).toEqual(
      expect.arrayContaining(['docs/examples/bank-data-walkthrough.mjs', 'docs/examples/openid-client-app.mjs']),
    );
  });

  for (const listing of listings) {
    it(`${listing.document}:${listing.line} lists ${listing.listed} as it is`, () => {
      const where = path.join(PROJECT_ROOT, listing.listed);
      expect(fs.existsSync(where), `${listing.listed} does not exist`).toBe(true);
      // The block's body has no final newline; the file ends with one.
      expect(`${listing.body}\n`, `the listing differs from ${listing.listed}: copy the file into the block again`).toBe(
        fs.readFileSync(where, 'utf8'),
      );
    });
  }

  for (const program of programs) {
    it(`${program} is listed by a document and run by a runnable block`, () => {
      expect(listings.some((l) => l.listed === program)).toBe(true);
      const runs = documents.some(({ blocks }) => blocks.some((block) => isRunnable(block) && block.body.includes(`node ${program}`)));
      expect(runs, `no runnable block runs "node ${program}"`).toBe(true);
    });
  }
});

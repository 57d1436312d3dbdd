import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { describeFile, FILES, importOpenApi, SOURCE, type Manifest } from '../../scripts/import-openapi.js';
import { tempDir } from '../helpers/app.js';
import { PUBLISHED_DOCUMENTS, SPEC_DIR } from '../helpers/published-openapi.js';

/** The vendored published documents (spec/openapi): what they are, and that they are unchanged. */
const manifest = JSON.parse(fs.readFileSync(path.join(SPEC_DIR, 'manifest.json'), 'utf8')) as Manifest;

describe('vendored OpenAPI documents', () => {
  it('are YAML OpenAPI 3.x documents with paths', () => {
    for (const name of PUBLISHED_DOCUMENTS) {
      const doc = YAML.parse(fs.readFileSync(path.join(SPEC_DIR, `${name}.yaml`), 'utf8')) as {
        openapi?: unknown;
        paths?: Record<string, unknown>;
      };
      expect(doc.openapi, name).toMatch(/^3\.\d+\.\d+$/);
      expect(Object.keys(doc.paths ?? {}).length, name).toBeGreaterThan(0);
    }
  });

  it('match the SHA-256 and git blob ids the manifest records for its upstream commit', () => {
    expect(manifest).toMatchObject({ source: SOURCE, commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(Object.keys(manifest.files).sort()).toEqual(Object.keys(FILES).sort());
    expect(Object.keys(FILES).sort()).toEqual([...PUBLISHED_DOCUMENTS.map((name) => `${name}.yaml`), 'LICENSE'].sort());
    for (const [name, recorded] of Object.entries(manifest.files)) {
      expect({ upstream: recorded.upstream, ...describeFile(fs.readFileSync(path.join(SPEC_DIR, name))) }, name).toEqual(recorded);
    }
  });

  it('keep their MIT licence', () => {
    const licence = fs.readFileSync(path.join(SPEC_DIR, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License/);
    expect(licence).toMatch(/Copyright \(c\) \d{4} chariot-giving/);
  });

  it('are what the import script makes of an upstream-shaped checkout', () => {
    // A checkout laid out like chariot-openapi, holding the vendored files.
    const checkout = tempDir('almoner-openapi-upstream-');
    for (const [name, upstream] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(checkout, upstream)), { recursive: true });
      fs.copyFileSync(path.join(SPEC_DIR, name), path.join(checkout, upstream));
    }
    const out = tempDir('almoner-openapi-import-');
    expect(importOpenApi(checkout, manifest.commit, out)).toEqual(manifest);
    expect(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).toBe(fs.readFileSync(path.join(SPEC_DIR, 'manifest.json'), 'utf8'));
    for (const name of Object.keys(FILES))
      expect(fs.readFileSync(path.join(out, name)).equals(fs.readFileSync(path.join(SPEC_DIR, name))), name).toBe(true);
    // Without a commit to name, or from a folder that is not a checkout, it refuses.
    expect(() => importOpenApi(checkout, 'HEAD', out)).toThrow(/pass --commit/);
    expect(() => importOpenApi(out, manifest.commit, tempDir())).toThrow(
      /not a checkout of chariot-openapi: missing specs\/2026-04-01.yaml/,
    );
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROVIDER_PAYLOAD_FIELDS } from '../../src/db/provider-payload.js';

/**
 * Every field of oidc-provider's stored payloads that src/ reads or writes on its own (SQL on
 * oidc_models.payload, a stored row's payload) is declared in src/db/provider-payload.ts, where
 * the provider-internals tripwire checks that the library still stores it: a new reach-in into a
 * payload cannot come in unlisted.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.resolve(here, '../../src');

/** How code reaches into a stored payload: SQL's ->, ->> and jsonb_set, a jsonpath on it, a row's payload in TypeScript. */
const PATTERNS = [
  /payload ?->>? ?'(\w+)'/g,
  /jsonb_set\(\s*[\w.]*payload\s*,\s*'\{(\w+)[,}]/g,
  /payload @\?[^;]*?\$\.(\w+)/g,
  /\brow\??\.payload\??\.(\w+)/g,
  // The adapter's columns taken from the payload (a JWT's payload elsewhere is no stored row).
  /typeof payload\.(\w+) === 'string' \? payload\./g,
];

export function payloadFieldsIn(text: string): string[] {
  return [...new Set(PATTERNS.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]!)))];
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('stored payload fields src/ relies on', () => {
  it('finds the fields of each way of reaching in', () => {
    const text = [
      "select t.payload->>'clientId', s.payload -> 'authorizations'",
      "set payload = jsonb_set(s.payload, '{exp}', 1)",
      "where s.payload @? '$.sessions.* ? (@.x)'",
      "if (row?.payload.kind === 1) x = typeof payload.grantId === 'string' ? payload.grantId : null;",
    ].join('\n');
    expect(payloadFieldsIn(text).sort()).toEqual(['authorizations', 'clientId', 'exp', 'grantId', 'kind', 'sessions']);
  });

  it('every field read or written in src/ is declared in src/db/provider-payload.ts', () => {
    const declared = new Set(Object.keys(PROVIDER_PAYLOAD_FIELDS));
    const used = new Map<string, string[]>();
    for (const file of sourceFiles(SRC)) {
      for (const field of payloadFieldsIn(fs.readFileSync(file, 'utf8'))) {
        used.set(field, [...(used.get(field) ?? []), path.relative(SRC, file)]);
      }
    }
    const undeclared = [...used].filter(([field]) => !declared.has(field)).map(([field, files]) => `${field} (${files.join(', ')})`);
    expect(undeclared).toEqual([]);
    // The walk sees the known readers (a pattern that stopped matching would pass everything).
    expect([...used.keys()]).toEqual(expect.arrayContaining(['clientId', 'accountId', 'authorizations', 'exp', 'uid', 'kind', 'jkt']));
  });
});

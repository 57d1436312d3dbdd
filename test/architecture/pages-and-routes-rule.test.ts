import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The rule `pages-and-routes-call-services` of .dependency-cruiser.cjs (docs/layout.md,
 * "Boundaries the linter holds"): `npm run lint` holds src/ to it; this proves it bites, by
 * running the repository's own rules over a scratch src/ of pages, routes, services and
 * repositories, so a rule whose paths stop matching fails here rather than passing quietly.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const RULE = 'pages-and-routes-call-services';
const { forbidden } = createRequire(import.meta.url)(path.resolve(here, '../../.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
};

/** The scratch tree: each file and what it imports (a `type` import says so). */
const SCRATCH: Record<string, string> = {
  'src/db/executor.ts': 'export const inTransaction = (): number => 1;',
  'src/db/database.ts': 'export type Db = { readonly db: true };',
  'src/things/repository.ts': 'export const findThing = (): number => 1;\nexport type ThingRow = { id: string };',
  'src/things/widgets-repository.ts': 'export const findWidget = (): number => 1;',
  'src/things/service.ts': [
    "import { findThing, type ThingRow } from './repository.js';",
    "import { findWidget } from './widgets-repository.js';",
    "import { inTransaction } from '../db/executor.js';",
    'export type { ThingRow };',
    'export const thing = (): number => findThing() + findWidget() + inTransaction();',
  ].join('\n'),
  // A routes module calling its service, and one reaching past it.
  'src/gateway/good/routes.ts': "import { thing } from '../../things/service.js';\nexport const r = thing;",
  'src/gateway/bad/routes.ts': "import { findThing } from '../../things/repository.js';\nexport const r = findThing;",
  'src/gateway/bad/widget-routes.ts': "import { findWidget } from '../../things/widgets-repository.js';\nexport const r = findWidget;",
  // Pages: a transaction of its own, a row type straight from the repository (type imports count).
  'src/dashboard/tx-page.ts': "import { inTransaction } from '../db/executor.js';\nexport const p = inTransaction;",
  'src/dashboard/typed-page.ts':
    "import type { ThingRow } from '../things/repository.js';\nexport const p = (row: ThingRow): string => row.id;",
  'src/dashboard/good-page.ts': [
    "import type { Db } from '../db/database.js';",
    "import { thing, type ThingRow } from '../things/service.js';",
    'export const p = (db: Db, row: ThingRow): string => `${String(db.db)}${row.id}${thing()}`;',
  ].join('\n'),
  'src/dashboard/page.ts': "import { findThing } from '../things/repository.js';\nexport const p = findThing;",
  'src/oidc/end-session-pages.ts': "import { findWidget } from '../things/widgets-repository.js';\nexport const p = findWidget;",
  // Any module in a pages/ folder is a page, whatever its name.
  'src/oidc/pages/welcome.ts': "import { findThing } from '../../things/repository.js';\nexport const p = findThing;",
};

let scratch: string;

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-depcruise-'));
  for (const [file, text] of Object.entries(SCRATCH)) {
    fs.mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    fs.writeFileSync(path.join(scratch, file), `${text}\n`);
  }
  fs.writeFileSync(
    path.join(scratch, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true }, include: ['src'] }),
  );
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** The rule's violations over the scratch tree, each `from → to`, sorted. */
async function violations(): Promise<string[]> {
  const result = await cruise(['src'], {
    baseDir: scratch,
    validate: true,
    ruleSet: { forbidden },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser answered text, not a cruise result');
  expect(result.output.modules.length, 'the scratch tree was cruised').toBe(Object.keys(SCRATCH).length);
  return result.output.summary.violations
    .filter((v) => v.rule.name === RULE)
    .map((v) => `${v.from} → ${v.to}`)
    .sort();
}

describe(`the lint rule ${RULE}`, () => {
  it('refuses a page or a routes module that imports a repository or db/executor.ts, and lets services do so', async () => {
    expect(await violations()).toEqual([
      'src/dashboard/page.ts → src/things/repository.ts',
      'src/dashboard/tx-page.ts → src/db/executor.ts',
      'src/dashboard/typed-page.ts → src/things/repository.ts',
      'src/gateway/bad/routes.ts → src/things/repository.ts',
      'src/gateway/bad/widget-routes.ts → src/things/widgets-repository.ts',
      'src/oidc/end-session-pages.ts → src/things/widgets-repository.ts',
      'src/oidc/pages/welcome.ts → src/things/repository.ts',
    ]);
  });
});

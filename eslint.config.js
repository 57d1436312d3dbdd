import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Where queries may be built: the db/ module and repositories (`repository.ts`, `*-repository.ts`); .dependency-cruiser.cjs lets only these import kysely. */
const DATA_ACCESS_FILES = ['src/db/**', 'src/**/repository.ts', 'src/**/*-repository.ts'];
const QUERY_MESSAGE =
  'Only src/db/ and repositories (repository.ts, *-repository.ts) build queries: call a repository function, or use db/executor.ts (Executor, inTransaction).';
/** Building a query: Kysely's statement builders, whatever object they are called on, and its sql tag. */
const QUERY_BUILDERS = {
  selector: 'MemberExpression[property.name=/^(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)$/]',
  message: QUERY_MESSAGE,
};
const SQL_TAG = { selector: "TaggedTemplateExpression[tag.name='sql'], MemberExpression[object.name='sql']", message: QUERY_MESSAGE };
const SQL_IMPORT = { selector: "ImportDeclaration[source.value='kysely'] ImportSpecifier[imported.name='sql']", message: QUERY_MESSAGE };
const NO_QUERY_BUILDING = [QUERY_BUILDERS, SQL_TAG, SQL_IMPORT];
/** process.env is read in src/config only. */
const ENV_READ = {
  selector: "MemberExpression[object.name='process'][property.name='env']",
  message: 'Only src/config reads process.env (docs/layout.md, "Layout").',
};
/** No hidden request channels (docs/layout.md, "Boundaries the linter holds"): request state is ctx.state.oidc, one unit of work. */
const NO_ASYNC_STORAGE = {
  selector: "NewExpression[callee.name='AsyncLocalStorage']",
  message:
    'One AsyncLocalStorage: the unit of work (src/oidc/unit-of-work.ts). Pass request state in ctx.state.oidc (src/oidc/request-scope.ts) or as a parameter.',
};
/**
 * oidc-provider's own AsyncLocalStorage (`Provider.ctx`) is a second request channel the rule
 * above cannot see: the caller reaches the library's calls through the unit of work
 * (src/oidc/unit-of-work.ts, callerOfLibraryCall). Any read of `ctx` on the Provider class or a
 * provider (`provider.ctx`, `(Provider as …).ctx`, `Provider['ctx']`, `{ ctx } = Provider`).
 */
const PROVIDER = '/^[Pp]rovider$/';
const PROVIDER_CTX_MESSAGE =
  "No reads of oidc-provider's request context (Provider.ctx): carry what the library's calls need in the unit of work (src/oidc/unit-of-work.ts, callerOfLibraryCall).";
const NO_PROVIDER_CTX = [
  `MemberExpression[property.name='ctx'][object.name=${PROVIDER}]`,
  `MemberExpression[property.value='ctx'][object.name=${PROVIDER}]`,
  `MemberExpression[property.name='ctx'][object.type='TSAsExpression'][object.expression.name=${PROVIDER}]`,
  `MemberExpression[property.name='ctx'][object.type='TSAsExpression'][object.expression.expression.name=${PROVIDER}]`,
  `MemberExpression[property.value='ctx'][object.type='TSAsExpression'][object.expression.name=${PROVIDER}]`,
  `MemberExpression[property.value='ctx'][object.type='TSAsExpression'][object.expression.expression.name=${PROVIDER}]`,
  `VariableDeclarator[init.name=${PROVIDER}] > ObjectPattern > Property[key.name='ctx']`,
  `VariableDeclarator[init.expression.name=${PROVIDER}] > ObjectPattern > Property[key.name='ctx']`,
  `VariableDeclarator[init.expression.expression.name=${PROVIDER}] > ObjectPattern > Property[key.name='ctx']`,
].map((selector) => ({ selector, message: PROVIDER_CTX_MESSAGE }));
const NO_WEAK_MAP = {
  selector: "NewExpression[callee.name='WeakMap']",
  message: 'No WeakMap side channels: keep request state in ctx.state.oidc (src/oidc/request-scope.ts) or pass it as a parameter.',
};
const NO_SYMBOL_KEYS = {
  selector: "CallExpression[callee.name='Symbol']",
  message: 'No symbol-keyed side channels: keep request state in ctx.state.oidc (src/oidc/request-scope.ts) or pass it as a parameter.',
};
/** Transactions are opened by db/ and repositories, or through db/executor.ts's inTransaction (the services' unit of work). */
const NO_RAW_TRANSACTION = {
  selector: "CallExpression[callee.property.name='transaction']",
  message: 'Open a transaction with inTransaction (src/db/executor.ts); db.transaction() is for src/db/ and repositories.',
};
const restrictSyntax = (...selectors) => ({ 'no-restricted-syntax': ['error', ...selectors] });

export default tseslint.config(
  // vendor/: third-party files kept byte for byte as published (vendor/redoc/README.md).
  { ignores: ['dist/', 'node_modules/', 'data/', 'scratch/', 'coverage/', 'vendor/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        NodeJS: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      ...restrictSyntax(
        ENV_READ,
        NO_ASYNC_STORAGE,
        NO_WEAK_MAP,
        NO_SYMBOL_KEYS,
        NO_RAW_TRANSACTION,
        ...NO_QUERY_BUILDING,
        ...NO_PROVIDER_CTX,
      ),
    },
  },
  { files: DATA_ACCESS_FILES, rules: restrictSyntax(ENV_READ, NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, ...NO_PROVIDER_CTX) },
  // The unit of work's one AsyncLocalStorage; the pools of db/database.ts, keyed by their Db (no request).
  {
    files: ['src/oidc/unit-of-work.ts'],
    rules: restrictSyntax(ENV_READ, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_QUERY_BUILDING, ...NO_PROVIDER_CTX),
  },
  { files: ['src/db/database.ts'], rules: restrictSyntax(ENV_READ, NO_ASYNC_STORAGE, NO_SYMBOL_KEYS, ...NO_PROVIDER_CTX) },
  // Import boundaries (layers, circles, who imports whom) are declared once, in .dependency-cruiser.cjs.
  {
    files: ['src/config/**'],
    rules: restrictSyntax(NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_QUERY_BUILDING, ...NO_PROVIDER_CTX),
  },
  {
    files: [
      'test/**',
      'bench/**',
      'scripts/**',
      'docs/**',
      'vitest.config.ts',
      'vitest.interop.config.ts',
      'eslint.config.js',
      '.dependency-cruiser.cjs',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  // The documentation's examples are a reader's programs (docs/examples/), run as written by test/docs/.
  { files: ['docs/**'], languageOptions: { globals: { Headers: 'readonly' } } },
  // dependency-cruiser reads its configuration as CommonJS.
  { files: ['.dependency-cruiser.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  {
    files: ['src/embedded-postgres/server.ts', 'src/embedded-postgres/tools.ts'],
    // The embedded PostgreSQL's binaries run with the caller's environment, passed through untouched.
    rules: restrictSyntax(NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_QUERY_BUILDING, ...NO_PROVIDER_CTX),
  },
);

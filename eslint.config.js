import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Where queries may be built: the db/ module and repositories (`repository.ts`, `*-repository.ts`). */
const DATA_ACCESS_FILES = ['src/db/**', 'src/**/repository.ts', 'src/**/*-repository.ts'];
const ONLY_REPOSITORIES_IMPORT_KYSELY = { group: ['kysely', 'kysely/*'], message: 'Only src/db/ and repositories (repository.ts, *-repository.ts) touch the database: call a repository function, or use db/executor.ts (Executor, inTransaction).' };
const OIDC_NOT_GATEWAY = { group: ['**/gateway/**'], message: 'src/oidc must not import src/gateway: share through db/ or accounts/.' };
const GATEWAY_NOT_OIDC = { group: ['**/oidc/**'], message: 'src/gateway must not import src/oidc: share through db/ or accounts/.' };
/** process.env is read in src/config only. */
const ENV_READ = { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only src/config reads process.env (docs/layout.md, "Layout").' };
/** No hidden request channels (docs/layout.md, "Boundaries the linter holds"): request state is ctx.state.oidc, one unit of work. */
const NO_ASYNC_STORAGE = { selector: "NewExpression[callee.name='AsyncLocalStorage']", message: 'One AsyncLocalStorage: the unit of work (src/oidc/unit-of-work.ts). Pass request state in ctx.state.oidc (src/oidc/request-scope.ts) or as a parameter.' };
/**
 * oidc-provider's own AsyncLocalStorage (`Provider.ctx`) is a second request channel the rule
 * above cannot see: the caller reaches the library's calls through the unit of work
 * (src/oidc/unit-of-work.ts, callerOfLibraryCall). Any read of `ctx` on the Provider class or a
 * provider (`provider.ctx`, `(Provider as …).ctx`, `Provider['ctx']`, `{ ctx } = Provider`).
 */
const PROVIDER = '/^[Pp]rovider$/';
const PROVIDER_CTX_MESSAGE = "No reads of oidc-provider's request context (Provider.ctx): carry what the library's calls need in the unit of work (src/oidc/unit-of-work.ts, callerOfLibraryCall).";
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
const NO_WEAK_MAP = { selector: "NewExpression[callee.name='WeakMap']", message: 'No WeakMap side channels: keep request state in ctx.state.oidc (src/oidc/request-scope.ts) or pass it as a parameter.' };
const NO_SYMBOL_KEYS = { selector: "CallExpression[callee.name='Symbol']", message: 'No symbol-keyed side channels: keep request state in ctx.state.oidc (src/oidc/request-scope.ts) or pass it as a parameter.' };
/** Transactions are opened by db/ and repositories, or through db/executor.ts's inTransaction (the services' unit of work). */
const NO_RAW_TRANSACTION = { selector: "CallExpression[callee.property.name='transaction']", message: 'Open a transaction with inTransaction (src/db/executor.ts); db.transaction() is for src/db/ and repositories.' };
const restrictSyntax = (...selectors) => ({ 'no-restricted-syntax': ['error', ...selectors] });
const restrictImports = (files, patterns, ignores = []) => ({ files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } });
/** The folders of src/ that are features: keys/, db/ and embedded-postgres/ sit below all of them (docs/layout.md). */
const FEATURES = ['accounts', 'apps', 'authorizations', 'audit', 'cli', 'dashboard', 'demo', 'gateway', 'http', 'interactions', 'limits', 'mail', 'metrics', 'mfa', 'oidc', 'server', 'views', 'webhooks'];
const NO_FEATURE_BELOW = { group: FEATURES.map((f) => `**/${f}/**`), message: 'src/keys, src/db and src/embedded-postgres import no feature: pass what they need in as a parameter, or let the feature import them.' };

/** authorizations/ is shared by oidc/, accounts/ and dashboard/, so it imports none of them (nor any other feature). */
const AUTHORIZATIONS_BELOW = { group: FEATURES.filter((f) => f !== 'authorizations').map((f) => `**/${f}/**`), message: 'src/authorizations imports only db/: oidc, accounts and the dashboard all use it, so an import from any of them closes a circle.' };

export default tseslint.config(
  // vendor/: third-party files kept byte for byte as published (vendor/redoc/README.md).
  { ignores: ['dist/', 'node_modules/', 'data/', 'scratch/', 'coverage/', 'vendor/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', NodeJS: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      ...restrictSyntax(ENV_READ, NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_PROVIDER_CTX),
    },
  },
  { files: DATA_ACCESS_FILES, rules: restrictSyntax(ENV_READ, NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, ...NO_PROVIDER_CTX) },
  // The unit of work's one AsyncLocalStorage; the pools of db/database.ts, keyed by their Db (no request).
  { files: ['src/oidc/unit-of-work.ts'], rules: restrictSyntax(ENV_READ, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_PROVIDER_CTX) },
  { files: ['src/db/database.ts'], rules: restrictSyntax(ENV_READ, NO_ASYNC_STORAGE, NO_SYMBOL_KEYS, ...NO_PROVIDER_CTX) },
  // Import boundaries (issue 15), all one rule: for a file several of these objects match, the
  // last one's no-restricted-imports replaces the earlier ones' (flat config does not merge
  // rule options), so each object lists every pattern that applies to the files it names.
  // Only db/ and repositories build queries: kysely (and its sql tag) is imported nowhere else.
  restrictImports(['src/**'], [ONLY_REPOSITORIES_IMPORT_KYSELY], DATA_ACCESS_FILES),
  // The authorization server and the resource gateway meet only through db/ (the stored
  // tokens) and accounts/: neither imports the other.
  restrictImports(['src/oidc/**'], [OIDC_NOT_GATEWAY]),
  restrictImports(['src/oidc/**'], [OIDC_NOT_GATEWAY, ONLY_REPOSITORIES_IMPORT_KYSELY], DATA_ACCESS_FILES),
  restrictImports(['src/gateway/**'], [GATEWAY_NOT_OIDC]),
  restrictImports(['src/gateway/**'], [GATEWAY_NOT_OIDC, ONLY_REPOSITORIES_IMPORT_KYSELY], DATA_ACCESS_FILES),
  // keys/ and db/ are below every feature: an arrow up from them makes a circle sooner or later.
  restrictImports(['src/keys/**'], [NO_FEATURE_BELOW, ONLY_REPOSITORIES_IMPORT_KYSELY], DATA_ACCESS_FILES),
  restrictImports(['src/keys/**/repository.ts', 'src/keys/**/*-repository.ts', 'src/db/**'], [NO_FEATURE_BELOW]),
  restrictImports(['src/embedded-postgres/**'], [NO_FEATURE_BELOW, ONLY_REPOSITORIES_IMPORT_KYSELY]),
  restrictImports(['src/authorizations/**'], [AUTHORIZATIONS_BELOW, ONLY_REPOSITORIES_IMPORT_KYSELY], DATA_ACCESS_FILES),
  restrictImports(['src/authorizations/**/repository.ts', 'src/authorizations/**/*-repository.ts'], [AUTHORIZATIONS_BELOW]),
  // No import circles in src/ (type-only imports vanish at run time and are not counted).
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // The TypeScript settings of import-x (parsing .ts dependencies), resolving './x.js' to x.ts as tsc does.
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver': undefined,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  { files: ['src/config/**'], rules: restrictSyntax(NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_PROVIDER_CTX) },
  { files: ['test/**', 'bench/**', 'scripts/**', 'vitest.config.ts', 'vitest.interop.config.ts', 'eslint.config.js'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/embedded-postgres/server.ts', 'src/embedded-postgres/tools.ts'],
    // The embedded PostgreSQL's binaries run with the caller's environment, passed through untouched.
    rules: restrictSyntax(NO_ASYNC_STORAGE, NO_WEAK_MAP, NO_SYMBOL_KEYS, NO_RAW_TRANSACTION, ...NO_PROVIDER_CTX),
  },
);

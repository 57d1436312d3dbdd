/**
 * The import graph of src/, declared once (docs/layout.md, "Boundaries the linter holds");
 * `npm run lint` runs it: `depcruise src --config .dependency-cruiser.cjs`. Type imports count
 * (an arrow is an arrow), except in the cycle rule, where they vanish at run time.
 */

/** The folders of src/, bottom up: a folder imports its own layer and those below it, never one above. */
const LAYERS = [
  { name: 'base', folders: ['config', 'errors', 'logging', 'embedded-postgres'] },
  { name: 'data', folders: ['db'] },
  {
    name: 'platform',
    folders: ['keys', 'authorizations', 'audit', 'mail', 'limits', 'http', 'views', 'webhooks', 'ledger', 'idempotency', 'storage'],
  },
  {
    name: 'domain',
    folders: ['accounts', 'mfa', 'identity', 'api-keys', 'events', 'daf', 'directory', 'grantmaking', 'giving', 'gift-processing'],
  },
  { name: 'surface', folders: ['oidc', 'gateway', 'dashboard', 'metrics', 'demo', 'donor-flow'] },
  // src/main.ts, app.ts and runtime.ts compose the whole beside these.
  { name: 'composition', folders: ['apps', 'cli', 'server'] },
];
const under = (folders) => `^src/(${folders.join('|')})/`;
const COMPOSITION = ['^src/[^/]+\\.ts$', '^src/apps/', '^src/gateway/index\\.ts$'];
/** Where queries are built: db/ and repositories (eslint.config.js holds the query builder's calls to the same files). */
/** Repositories: repository.ts, *-repository.ts. */
const REPOSITORIES = ['(^|/)repository\\.ts$', '-repository\\.ts$'];
const DATA_ACCESS = ['^src/db/', ...REPOSITORIES];
/** A module of HTTP routes: routes.ts, *-routes.ts. */
const ROUTES = '(/|-)routes\\.ts$';
/** The provider's table of paths, named routes.ts: oidc/ and metrics/ read it, and it builds no router. */
const OIDC_PATHS = '^src/oidc/routes\\.ts$';
/** Where HTTP is answered: routes modules, pages (*-page.ts, *-pages.ts, page.ts) and anything in a pages/ folder. */
const PAGES_AND_ROUTES = [ROUTES, '(^|/|-)pages?\\.ts$', '/pages/'];

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  severity: 'error',
  comment: `src/${layer.folders.join(', src/')} (${layer.name}) import nothing above their layer (${LAYERS.slice(i + 1)
    .map((l) => l.name)
    .join(', ')}): pass what they need in as a parameter, or move the shared part down.`,
  from: { path: under(layer.folders) },
  to: { path: [under(LAYERS.slice(i + 1).flatMap((l) => l.folders)), '^src/[^/]+\\.ts$'] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A module of src/ imports one that imports it back, however far round (type-only imports vanish at run time and do not count).',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    ...layerRules,
    {
      name: 'provider-internals-behind-one-module',
      severity: 'error',
      comment:
        'The seam to oidc-provider (docs/layout.md, "The seam to oidc-provider"): the parts in src/oidc/provider-internals/ are imported through src/oidc/provider-internals.ts only, so every reach-in is found in one place.',
      from: { path: '^src/', pathNot: ['^src/oidc/provider-internals\\.ts$', '^src/oidc/provider-internals/'] },
      to: { path: '^src/oidc/provider-internals/' },
    },
    {
      name: 'oidc-not-gateway',
      severity: 'error',
      comment:
        'The authorization server and the resource gateway meet only in db/, accounts/ and authorizations/: neither imports the other.',
      from: { path: '^src/oidc/' },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'gateway-not-oidc',
      severity: 'error',
      comment:
        'The authorization server and the resource gateway meet only in db/, accounts/ and authorizations/: neither imports the other.',
      from: { path: '^src/gateway/' },
      to: { path: '^src/oidc/' },
    },
    {
      name: 'keys-below-features',
      severity: 'error',
      comment: 'src/keys imports no feature (only db/ and the base): the features import it, and what it needs comes in as a parameter.',
      from: { path: '^src/keys/' },
      to: { path: '^src/', pathNot: under(['keys', 'db', 'config', 'errors', 'logging']) },
    },
    {
      name: 'authorizations-below-features',
      severity: 'error',
      comment:
        'src/authorizations imports only db/ (and the base): oidc, accounts, the dashboard and the gateway all use it, so an import from any of them closes a circle.',
      from: { path: '^src/authorizations/' },
      to: { path: '^src/', pathNot: under(['authorizations', 'db', 'config', 'errors', 'logging']) },
    },
    {
      name: 'ledger-below-features',
      severity: 'error',
      comment:
        'src/ledger (docs/ledger.md) imports only db/ and the base (config, errors, logging): financial accounts, transfers and disbursements build on it, so it knows none of them.',
      from: { path: '^src/ledger/' },
      to: { path: '^src/', pathNot: under(['ledger', 'db', 'config', 'errors', 'logging']) },
    },
    {
      name: 'dashboard-cli-not-gateway',
      severity: 'error',
      comment:
        'The dashboard and the admin CLI call the domain services (src/api-keys, src/events, src/daf, ...) that the gateway calls too, never the gateway itself.',
      from: { path: under(['dashboard', 'cli']) },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'routes-only-from-composition',
      severity: 'error',
      comment:
        "A routes module is imported by the composition only (src/*.ts, src/apps/, src/gateway/index.ts): what a page or a service shares with routes belongs in a module of its own. (src/oidc/routes.ts is the provider's table of paths, not a router.)",
      from: { path: '^src/', pathNot: [...COMPOSITION, ROUTES] },
      to: { path: ROUTES, pathNot: OIDC_PATHS },
    },
    {
      name: 'routes-beside-routes',
      severity: 'error',
      comment:
        "A routes module imports only the routes modules of its own folder (fdx/routes.ts gathers the FDX areas): one area does not reach into another's routes.",
      from: { path: '^(src/.+/)[^/]*routes\\.ts$' },
      to: { path: ROUTES, pathNot: ['^$1[^/]*routes\\.ts$', OIDC_PATHS] },
    },
    {
      name: 'pages-and-routes-call-services',
      severity: 'error',
      comment:
        "A page or a routes module keeps to HTTP (parsing, status, rendering) and calls a service (controller → service → repository): the service runs the queries, the transaction, the business rules and the audit, so the page and a second caller cannot drift apart. Call (or add) a function of the area's service (src/api-keys/service.ts, src/daf/*-service.ts, src/gateway/grants/service.ts, ...) instead of a repository or db/executor.ts.",
      from: { path: PAGES_AND_ROUTES },
      to: { path: [...REPOSITORIES, '^src/db/executor\\.ts$'] },
    },
    {
      name: 'only-repositories-import-kysely',
      severity: 'error',
      comment:
        'Only src/db/ and repositories (repository.ts, *-repository.ts) touch the database: call a repository function, or use db/executor.ts (Executor, inTransaction).',
      from: { path: '^src/', pathNot: DATA_ACCESS },
      to: { path: '^node_modules/kysely/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

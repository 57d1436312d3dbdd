// First: it catches what libraries print as they are loaded (library-notices.ts).
import { routeLibraryNotices } from './logging/library-notices.js';
import { ConfigError, isAlmonerWorker, loadConfig, unknownEnvProblems, unknownEnvSettings } from './config/load.js';
import type { AppConfig } from './config/schema.js';
import cluster from 'node:cluster';
import { DatabaseUnreachableError } from './db/resolve.js';
import { DEMO_PASSWORD, DEMO_USERS } from './demo/accounts-step.js';
import { EmbeddedPostgresError } from './embedded-postgres/server.js';
import { demoClientFile, readDemoClient } from './demo/demo-client-step.js';
import { hostTargets, withDevAliases } from './http/hosts.js';
import { createLogger, prettyFormat } from './logging/logger.js';
import { tuneHeap } from './server/heap-tuning.js';
import { nodeSupportNotice } from './server/node-support.js';
import { runWorker, startPrimary } from './server/workers.js';
import { ListenError, type ListenAddress } from './server/listeners.js';
import { ClientRegistryError } from './oidc/clients/schema.js';
import { startServer } from './server/start.js';
import { stopOnSignals } from './server/stop-on-signals.js';

/** What main needs of a started server: the single process (workers = 1) or a cluster primary. */
interface Started {
  config: AppConfig;
  database: { description: string };
  listening: ListenAddress[];
  metricsListening: ListenAddress | undefined;
  close(): Promise<void>;
}

/** The dev aliases of the dashboards at loopback addresses, where passkeys work (docs/oauth.md). */
function passkeyAliases(config: AppConfig): string[] {
  const aliases = withDevAliases(config, hostTargets(config)).flatMap((t) => (t.aliasOf ? [t.origin] : []));
  return aliases.length === 0 ? [] : [`  Passkeys (dev)          the dashboards also answer at ${aliases.join(' and ')}`];
}

function banner(config: AppConfig, server: Started): string {
  const lines = [
    '',
    `Almoner is running (profile: ${config.profile})`,
    '',
    `  API (production)        ${config.base_url}`,
    `  API (sandbox)           ${config.sandbox_base_url}`,
    `  Dashboard (production)  ${config.dashboard_url}`,
    `  Dashboard (sandbox)     ${config.sandbox_dashboard_url}`,
    ...passkeyAliases(config),
    '',
    `  Database                ${server.database.description}`,
  ];
  if (config.demo_data) {
    lines.push('', `  Demo users (password "${DEMO_PASSWORD}", dev profile only):`);
    for (const user of DEMO_USERS) lines.push(`    ${user.email.padEnd(24)} ${user.role} of Demo Food Bank (12-3456789)`);
    const client = readDemoClient(config.data_dir);
    if (client) {
      lines.push(
        '',
        `  Demo client (sandbox; also in ${demoClientFile(config.data_dir)}):`,
        `    client_id      ${client.client_id}`,
        `    client_secret  ${client.client_secret}`,
        `    redirect_uris  ${client.redirect_uris.join(' ')}`,
        `    authorize at   ${config.sandbox_dashboard_url}/oauth/sandbox/authorize`,
        `    token at       ${config.sandbox_base_url}/auth/oauth/token`,
      );
    }
  }
  lines.push('', '  Health: GET /healthz and /readyz on each URL. Stop with Ctrl-C.', '');
  return lines.join('\n');
}

/** Failures whose message is the whole story for an operator (what is wrong, where to fix it): no stack. */
function isOperatorError(error: unknown): error is Error {
  return (
    error instanceof DatabaseUnreachableError ||
    error instanceof EmbeddedPostgresError ||
    error instanceof ListenError ||
    error instanceof ClientRegistryError
  );
}

async function main(): Promise<void> {
  tuneHeap();
  let config: AppConfig;
  try {
    config = loadConfig();
    // A mistyped variable is a setting silently not applied: the dev profile stops on it; the
    // production profile warns (an orchestrator may add ALMONER_* variables of its own).
    const unknown = unknownEnvProblems();
    if (unknown.length > 0 && config.profile === 'dev') throw new ConfigError(unknown);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`almoner: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // Dev: readable lines for the person at the terminal; production: JSON for log shippers.
  const pretty = config.profile === 'dev' ? await prettyFormat() : undefined;
  const logger = createLogger(config.log_level, undefined, pretty ?? 'json');
  // On Node 20 the server says so once, below (in a worker, its primary did): oidc-provider's own line would repeat it.
  const notice = nodeSupportNotice();
  routeLibraryNotices(logger, { runtimeNoticeSaid: notice !== undefined });
  // A worker forked by a primary (workers > 1): the primary has said all there is to say at start.
  if (isAlmonerWorker() && cluster.isWorker) return runWorker(config, logger.child({ worker: process.pid }));
  if (config.profile === 'dev' && !pretty) logger.warn('pino-pretty is not installed (a production install omits it): logging JSON lines');
  if (notice) logger.warn({ node: process.versions.node }, notice);
  const unknown = unknownEnvSettings();
  if (unknown.length > 0)
    logger.warn({ variables: unknown, problems: unknownEnvProblems() }, 'ignoring unknown ALMONER_* environment variables');

  // Before anything starts: a signal at any stage stops what was started (docs/operations.md, "Starting and stopping").
  const stop = stopOnSignals(logger, { level: 'info', stopping: 'shutting down', stopped: 'stopped', failed: 'shutdown failed' });
  let server: Started;
  try {
    // workers > 1: a primary that forks the workers; 1: the whole server here, no cluster at all.
    server =
      config.workers > 1 ? await startPrimary(config, logger, stop.signal) : await startServer(config, logger, { signal: stop.signal });
  } catch (error) {
    // Ctrl-C reaches the whole process group: initdb or pg_ctl may die of it a moment before
    // our own handler runs, and that is an interrupted start, not a failed one.
    if (!stop.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 100));
    if (stop.signal.aborted) {
      // The signal interrupted the start, which undid what it had done: nothing is left to close.
      stop.serve(undefined);
      return;
    }
    const message = (error as Error)?.message ?? String(error);
    if (isOperatorError(error)) logger.fatal(`start failed: ${message}`);
    else logger.fatal({ err: error }, 'start failed');
    process.stderr.write(`almoner: could not start: ${message}\n`);
    process.exit(1);
  }
  // A signal during the last step of the start: the server is whole, and closes at once.
  if (stop.signal.aborted) return stop.serve(server);

  // What is served: a port-0 URL now names its bound port.
  const served = server.config;
  logger.info(
    {
      urls: [served.base_url, served.sandbox_base_url, served.dashboard_url, served.sandbox_dashboard_url],
      listening: server.listening,
      metrics: server.metricsListening,
    },
    'ready',
  );
  // After "ready": both are synchronous writes to stdout, so the banner comes last, where the eye lands.
  if (served.profile === 'dev') process.stdout.write(`${banner(served, server)}\n`);

  stop.serve(server);
}

await main();

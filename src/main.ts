import { ConfigError, isAlmonerWorker, loadConfig, unknownEnvSettings } from './config/load.js';
import type { AppConfig } from './config/schema.js';
import cluster from 'node:cluster';
import { DEMO_PASSWORD, DEMO_USERS } from './demo/accounts-step.js';
import { demoClientFile, readDemoClient } from './demo/demo-client-step.js';
import { createLogger } from './logging/logger.js';
import { tuneHeap } from './server/heap-tuning.js';
import { nodeSupportNotice } from './server/node-support.js';
import { runWorker, startPrimary } from './server/workers.js';
import type { ListenAddress } from './server/listeners.js';
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

function banner(config: AppConfig, server: Started): string {
  const lines = [
    '',
    `Almoner is running (profile: ${config.profile})`,
    '',
    `  API (production)        ${config.base_url}`,
    `  API (sandbox)           ${config.sandbox_base_url}`,
    `  Dashboard (production)  ${config.dashboard_url}`,
    `  Dashboard (sandbox)     ${config.sandbox_dashboard_url}`,
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

async function main(): Promise<void> {
  tuneHeap();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`almoner: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // Dev: readable lines for the person at the terminal; production: JSON for log shippers.
  const logger = createLogger(config.log_level, undefined, config.profile === 'dev' ? 'pretty' : 'json');
  // A worker forked by a primary (workers > 1): the primary has said all there is to say at start.
  if (isAlmonerWorker() && cluster.isWorker) return runWorker(config, logger.child({ worker: process.pid }));
  const notice = nodeSupportNotice();
  if (notice) logger.warn({ node: process.versions.node }, notice);
  const unknown = unknownEnvSettings();
  if (unknown.length > 0) logger.warn({ variables: unknown }, 'ignoring unknown ALMONER_* environment variables');

  let server: Started;
  try {
    // workers > 1: a primary that forks the workers; 1: the whole server here, no cluster at all.
    server = config.workers > 1 ? await startPrimary(config, logger) : await startServer(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'start failed');
    process.stderr.write(`almoner: could not start: ${(error as Error).message}\n`);
    process.exit(1);
  }

  // What is served: a port-0 URL now names its bound port.
  const served = server.config;
  logger.info({ urls: [served.base_url, served.sandbox_base_url, served.dashboard_url, served.sandbox_dashboard_url], listening: server.listening, metrics: server.metricsListening }, 'ready');
  // After "ready": both are synchronous writes to stdout, so the banner comes last, where the eye lands.
  if (served.profile === 'dev') process.stdout.write(`${banner(served, server)}\n`);

  stopOnSignals(server, logger, { level: 'info', stopping: 'shutting down', stopped: 'stopped', failed: 'shutdown failed' });
}

await main();

import net from 'node:net';
import type { AppConfig } from '../config/schema.js';
import { envNameFor } from '../config/schema.js';
import { ListenError, listenAddresses, parseListenAddress, type ListenAddress } from './listeners.js';

/**
 * Every port the start will listen on, tried before anything else starts (docs/operations.md,
 * "Starting and stopping"): the embedded PostgreSQL, migrations and the demo seed take tens of
 * seconds, and a busy port found after them costs that wait once per busy port. Each address is
 * bound and held until all are tried (so two of our own listeners that clash are found too),
 * then released for the real listeners; a port taken in between still fails there, as before.
 * Port 0 (an ephemeral port) cannot be busy and is not tried.
 */

/** An address that could not be bound, and why (the error's code: EADDRINUSE, EACCES …). */
type Refusal = { address: ListenAddress; code: string | undefined; message: string };

type PortConfig = Pick<
  AppConfig,
  'listen' | 'metrics_listen' | 'port_base' | 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'
>;

function addressesOf(config: PortConfig): ListenAddress[] {
  const addresses = listenAddresses(config);
  if (config.metrics_listen) addresses.push(parseListenAddress(config.metrics_listen, 'metrics_listen'));
  return addresses.filter((address) => address.port !== 0);
}

function tryBind(address: ListenAddress): Promise<net.Server | Refusal> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve({ address, code: error.code, message: error.message }));
    server.listen({ host: address.host, port: address.port, exclusive: true }, () => resolve(server));
  });
}

const where = (r: Refusal) => {
  const host = r.address.host.includes(':') ? `[${r.address.host}]` : r.address.host;
  return `${host}:${r.address.port}${r.address.settings ? ` (${r.address.settings.join(', ')})` : ''}`;
};

function joined(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`;
}

/** What moves the refused ports: the settings they came from, one phrase. */
function remedy(config: PortConfig, refused: readonly Refusal[]): string {
  const settings = new Set(refused.flatMap((r) => r.address.settings ?? []));
  const fromUrls = [...settings].filter((s) => s.endsWith('_URL'));
  const others = [...settings].filter((s) => !s.endsWith('_URL'));
  const ways: string[] = [];
  if (fromUrls.length > 0) {
    const base = envNameFor('port_base');
    ways.push(
      config.port_base === undefined
        ? `set ${base} (e.g. ${base}=4000 moves the four URLs to ports 4000-4003)`
        : `choose another ${base} (now ${config.port_base})`,
      `change the port in ${joined(fromUrls)}`,
      `set ${envNameFor('listen')}`,
    );
  }
  for (const setting of others) ways.push(`change ${setting}`);
  return ways.length === 1 ? ways[0]! : `${ways.slice(0, -1).join(', ')} or ${ways.at(-1)!}`;
}

function describeRefusals(config: PortConfig, refused: readonly Refusal[]): string {
  const inUse = refused.filter((r) => r.code === 'EADDRINUSE');
  const denied = refused.filter((r) => r.code === 'EACCES');
  const other = refused.filter((r) => r.code !== 'EADDRINUSE' && r.code !== 'EACCES');
  const parts: string[] = [];
  if (inUse.length === 1) parts.push(`${where(inUse[0]!)}: the port is already in use (is another Almoner running?)`);
  if (inUse.length > 1) parts.push(`${joined(inUse.map(where))}: the ports are already in use (is another Almoner running?)`);
  if (denied.length > 0) parts.push(`${joined(denied.map(where))}: permission denied (ports below 1024 need privileges)`);
  for (const r of other) parts.push(`${where(r)}: ${r.message}`);
  return `cannot listen on ${parts.join('; on ')}; to serve on other ports, ${remedy(config, refused)}`;
}

/** Throws one ListenError naming every port that cannot be bound; binds nothing that outlives the call. */
export async function checkPortsFree(config: PortConfig): Promise<void> {
  const held: net.Server[] = [];
  const refused: Refusal[] = [];
  try {
    for (const address of addressesOf(config)) {
      const outcome = await tryBind(address);
      if (outcome instanceof net.Server) held.push(outcome);
      else refused.push(outcome);
    }
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
  if (refused.length > 0) throw new ListenError(describeRefusals(config, refused));
}

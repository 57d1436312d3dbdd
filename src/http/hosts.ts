import net from 'node:net';
import type { AppConfig } from '../config/schema.js';
import type { Environment } from '../db/schema.js';

export type Surface = 'api' | 'dashboard';
export type HostKey = 'api' | 'sandbox_api' | 'dashboard' | 'sandbox_dashboard';

export interface HostTarget {
  key: HostKey;
  environment: Environment;
  surface: Surface;
  /** The public origin this target answers at: the configured one, e.g. https://api.example.org, or a dev alias's. */
  origin: string;
  /** A dev alias (devAliases): the configured origin it stands beside, where the authorization flow stays. */
  aliasOf?: string;
  /** A configured dashboard with a dev alias: the alias's origin (where passkeys work). */
  alias?: string;
}

export function hostTargets(
  config: Pick<AppConfig, 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'>,
): HostTarget[] {
  return [
    { key: 'api', environment: 'production', surface: 'api', origin: config.base_url },
    { key: 'sandbox_api', environment: 'sandbox', surface: 'api', origin: config.sandbox_base_url },
    { key: 'dashboard', environment: 'production', surface: 'dashboard', origin: config.dashboard_url },
    { key: 'sandbox_dashboard', environment: 'sandbox', surface: 'dashboard', origin: config.sandbox_dashboard_url },
  ];
}

/** True for an IP address of this machine's loopback interface (127.0.0.0/8, ::1). */
function isLoopbackIp(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return (net.isIPv4(bare) && bare.startsWith('127.')) || bare === '::1';
}

/**
 * The dev profile's second name for a dashboard at a loopback IP address (docs/oauth.md,
 * "Passkeys at the dev default"): http://localhost:<port> beside http://127.0.0.1:<port>, the
 * same dashboard (environment, data) at its own origin (CSRF checks, cookies, WebAuthn), since
 * WebAuthn needs a domain name. The authorization flow stays at the configured URL. None in
 * production, for a dashboard at a name, or where two dashboards would share one alias.
 */
export function withDevAliases(config: Pick<AppConfig, 'profile'>, targets: readonly HostTarget[]): HostTarget[] {
  if (config.profile !== 'dev') return [...targets];
  const aliasOf = (target: HostTarget) => {
    const url = new URL(target.origin);
    if (target.surface !== 'dashboard' || url.protocol !== 'http:' || !isLoopbackIp(url.hostname)) return undefined;
    url.hostname = 'localhost';
    return url.origin;
  };
  const aliases = targets.map(aliasOf);
  const taken = new Set(targets.map((t) => normaliseAuthority(new URL(t.origin).host)));
  const usable = (alias: string | undefined): alias is string =>
    alias !== undefined && !taken.has(normaliseAuthority(new URL(alias).host)) && aliases.filter((a) => a === alias).length === 1;
  return [
    ...targets.map((target, i) => (usable(aliases[i]) ? { ...target, alias: aliases[i] } : target)),
    ...targets.flatMap((target, i) => (usable(aliases[i]) ? [{ ...target, origin: aliases[i]!, aliasOf: target.origin }] : [])),
  ];
}

/** host[:port] lower-cased, with the default ports dropped, so "API.example.org:443" matches. */
export function normaliseAuthority(authority: string): string {
  return authority
    .trim()
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/:(80|443)$/, '');
}

/** Resolves a request's Host header to one of the four configured hosts. */
export class HostTable {
  private readonly byAuthority = new Map<string, HostTarget>();

  constructor(readonly targets: readonly HostTarget[]) {
    for (const target of targets) this.byAuthority.set(normaliseAuthority(new URL(target.origin).host), target);
  }

  lookup(hostHeader: string | undefined): HostTarget | undefined {
    if (!hostHeader) return undefined;
    return this.byAuthority.get(normaliseAuthority(hostHeader));
  }

  /** The targets a listener on `port` answers for (by their URLs' ports; none when listeners are set apart, ALMONER_LISTEN). */
  onPort(port: number | undefined): HostTarget[] {
    return this.targets.filter((t) => {
      const url = new URL(t.origin);
      return Number(url.port || (url.protocol === 'https:' ? 443 : 80)) === port;
    });
  }
}

/** True for Host values that name this machine's loopback interface (any port). */
export function isLoopbackAuthority(hostHeader: string): boolean {
  const host = normaliseAuthority(hostHeader)
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

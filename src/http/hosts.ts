import net from 'node:net';
import type { AppConfig } from '../config/schema.js';
import type { Environment } from '../db/schema.js';

export type Surface = 'api' | 'dashboard';
export type HostKey = 'api' | 'sandbox_api' | 'dashboard' | 'sandbox_dashboard';

export interface HostTarget {
  key: HostKey;
  environment: Environment;
  surface: Surface;
  /** The configured public origin, e.g. https://api.example.org */
  origin: string;
}

export function hostTargets(config: Pick<AppConfig, 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'>): HostTarget[] {
  return [
    { key: 'api', environment: 'production', surface: 'api', origin: config.base_url },
    { key: 'sandbox_api', environment: 'sandbox', surface: 'api', origin: config.sandbox_base_url },
    { key: 'dashboard', environment: 'production', surface: 'dashboard', origin: config.dashboard_url },
    { key: 'sandbox_dashboard', environment: 'sandbox', surface: 'dashboard', origin: config.sandbox_dashboard_url },
  ];
}

/** host[:port] lower-cased, with the default ports dropped, so "API.example.org:443" matches. */
export function normaliseAuthority(authority: string): string {
  return authority.trim().toLowerCase().replace(/\.$/, '').replace(/:(80|443)$/, '');
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

  get(key: HostKey): HostTarget {
    return this.targets.find((t) => t.key === key)!;
  }
}

/** True for Host values that name this machine's loopback interface (any port). */
export function isLoopbackAuthority(hostHeader: string): boolean {
  const host = normaliseAuthority(hostHeader).replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

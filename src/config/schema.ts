import net from 'node:net';
import { z } from 'zod';

/** Every setting Almoner reads, in one flat namespace so each maps to one env var. */

const originUrl = z
  .string()
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL such as https://api.example.org' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: 'must use http or https' });
    }
    if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: 'custom', message: 'must be an origin only (scheme, host, optional port), without path, query, fragment or credentials' });
    }
  })
  // Normalised form: scheme and host lower-cased, default port dropped, no trailing slash.
  .transform((value) => new URL(value).origin);

export function isCidrOrAddress(value: string): boolean {
  const [address, prefix, extra] = value.split('/');
  if (extra !== undefined || !address) return false;
  const family = net.isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const cidr = z.string().refine(isCidrOrAddress, { message: 'must be an IP address or CIDR range (IPv4 or IPv6), e.g. 10.0.0.0/8 or fd00::/8' });

const listenAddress = z.string().refine(
  (value) => {
    const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
    if (!match) return false;
    const host = match[1] ?? match[2] ?? '';
    const port = Number(match[3]);
    return port >= 0 && port <= 65535 && (net.isIP(host) !== 0 || host === 'localhost');
  },
  { message: 'must be host:port with an IP address or localhost, e.g. 0.0.0.0:8080 or [::]:8443' },
);

const booleanLike = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  return value;
}, z.boolean());

const intIn = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const settingsShape = z
  .object({
    profile: z.enum(['dev', 'production']),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// connection URL')
      .optional(),
    database_pool_max: intIn(1, 200),
    database_statement_timeout_ms: intIn(0, 600_000),
    data_dir: z.string().min(1),
    base_url: originUrl,
    sandbox_base_url: originUrl,
    dashboard_url: originUrl,
    sandbox_dashboard_url: originUrl,
    listen: z.array(listenAddress).optional(),
    tls_cert: z.string().min(1).optional(),
    tls_key: z.string().min(1).optional(),
    trusted_proxies: z.array(cidr),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    shutdown_grace_seconds: intIn(0, 600),
    demo_data: booleanLike,
    password_memory_kib: intIn(19_456, 4_194_304),
    password_time_cost: intIn(2, 100),
    password_parallelism: intIn(1, 16),
    clients_file: z.string().min(1),
    clients_poll_seconds: intIn(1, 60),
    refresh_reuse_grace_seconds: intIn(0, 300),
    ip_restricted_areas: z.array(z.enum(['fdx', 'donations', 'grants', 'nonprofits'])),
    secrets_key: z.string().min(32).optional(),
    smtp_url: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
    mail_from: z.string().min(3),
    webhook_retry_seconds: z.array(z.coerce.number().int().min(1).max(7 * 86_400)).min(0).max(20),
    webhook_timeout_ms: intIn(100, 60_000),
    webhook_poll_ms: intIn(50, 60_000),
    metrics_listen: listenAddress.optional(),
    metrics_allow: z.array(cidr),
    ready_file: z.string().min(1).optional(),
  })
  .strict();

/** The four public URL settings, in the order listeners and banners use them. */
export const PUBLIC_URL_KEYS = ['base_url', 'sandbox_base_url', 'dashboard_url', 'sandbox_dashboard_url'] as const;

/** Port 0 in a public URL: the server binds an ephemeral port for it and builds the URL from it. */
export function hasEphemeralPort(origin: string): boolean {
  try {
    return new URL(origin).port === '0';
  } catch {
    return false; // reported by the URL's own rule
  }
}

export const configSchema = settingsShape.superRefine((config, ctx) => {
    // Each port-0 URL gets a port of its own once bound, so only the others can collide.
    const fixed = PUBLIC_URL_KEYS.map((key) => config[key]).filter((origin) => !hasEphemeralPort(origin));
    if (new Set(fixed).size !== fixed.length) {
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'the four public URLs (base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url) must all differ' });
    }
    const ephemeral = PUBLIC_URL_KEYS.find((key) => hasEphemeralPort(config[key]));
    if (ephemeral && config.listen && config.listen.length > 0) {
      ctx.addIssue({ code: 'custom', path: [ephemeral], message: 'port 0 (an ephemeral port) in a public URL needs listen unset: the port bound for the URL is the one it names' });
    }
    if (config.metrics_listen && !config.metrics_listen.endsWith(':0') && config.listen?.includes(config.metrics_listen)) {
      ctx.addIssue({ code: 'custom', path: ['metrics_listen'], message: 'must differ from every listen address (it is a listener of its own)' });
    }
    if ((config.tls_cert === undefined) !== (config.tls_key === undefined)) {
      ctx.addIssue({ code: 'custom', path: [config.tls_cert ? 'tls_key' : 'tls_cert'], message: 'tls_cert and tls_key must be set together' });
    }
    if (config.profile !== 'production') return;
    // The production profile refuses to start without what makes it safe; every gap is named at once.
    if (!config.database_url) {
      ctx.addIssue({ code: 'custom', path: ['database_url'], message: 'is required in the production profile (an external PostgreSQL server)' });
    }
    if (!config.tls_cert && config.trusted_proxies.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls_cert'],
        message: 'HTTPS is required in the production profile: set tls_cert and tls_key (ALMONER_TLS_CERT, ALMONER_TLS_KEY) or trusted_proxies (ALMONER_TRUSTED_PROXIES) for a TLS-terminating proxy',
      });
    }
    for (const key of PUBLIC_URL_KEYS) {
      if (!config[key].startsWith('https://')) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be an https URL in the production profile' });
      }
    }
    if (config.demo_data) {
      ctx.addIssue({ code: 'custom', path: ['demo_data'], message: 'demo data is never seeded in the production profile' });
    }
  });

export type AppConfig = Readonly<z.output<typeof configSchema>>;

/** Settings whose environment value is a comma-separated list. */
export const LIST_SETTINGS: ReadonlySet<string> = new Set(['listen', 'trusted_proxies', 'ip_restricted_areas', 'webhook_retry_seconds', 'metrics_allow']);

/** The environment variable that overrides a setting. */
export function envNameFor(key: string): string {
  if (key === 'database_url') return 'DATABASE_URL';
  return `ALMONER_${key.toUpperCase()}`;
}

export const SETTING_KEYS: readonly string[] = Object.keys(settingsShape.shape);

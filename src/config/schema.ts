import net from 'node:net';
import os from 'node:os';
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
      ctx.addIssue({
        code: 'custom',
        message: 'must be an origin only (scheme, host, optional port), without path, query, fragment or credentials',
      });
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

const cidr = z
  .string()
  .refine(isCidrOrAddress, { message: 'must be an IP address or CIDR range (IPv4 or IPv6), e.g. 10.0.0.0/8 or fd00::/8' });

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

/** A whole number in [min, max], from a JSON number or the environment's text; one message for every way to miss it. */
const intIn = (min: number, max: number) => {
  const expected = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error: expected }).int(expected).min(min, expected).max(max, expected);
};

/** Most server processes one host runs (ALMONER_WORKERS). */
export const MAX_WORKERS = 256;

/** `auto` (one per core: os.availableParallelism()) or a whole number of processes; the output is the number. */
const workerCount = z
  .union([z.literal('auto'), z.coerce.number().int().min(1).max(MAX_WORKERS)], {
    error: `must be "auto" (one per core) or a whole number from 1 to ${MAX_WORKERS}`,
  })
  .transform((value) => (value === 'auto' ? os.availableParallelism() : value));

const settingsShape = z
  .object({
    profile: z
      .enum(['dev', 'production'])
      .describe('`dev` or `production`; chosen by ALMONER_PROFILE alone (never by a config file), it picks config/<profile>.json'),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// connection URL')
      .optional()
      .describe(
        'An external PostgreSQL (13 or later); unset means the embedded PostgreSQL in data_dir (dev profile only; required in production)',
      ),
    database_pool_max: intIn(1, 200).describe('Database connections per process'),
    database_statement_timeout_ms: intIn(0, 600_000).describe('Statement timeout per statement, in milliseconds; 0 disables it'),
    data_dir: z
      .string()
      .min(1)
      .describe(
        'Embedded PostgreSQL data (pg/, possibly relocated under /var/lib/almoner when run as root), its credentials file and, without secrets_key, the key file',
      ),
    base_url: originUrl.describe('Public origin of the API, production environment'),
    sandbox_base_url: originUrl.describe('Public origin of the API, sandbox environment'),
    dashboard_url: originUrl.describe('Public origin of the hosted pages, production environment'),
    sandbox_dashboard_url: originUrl.describe('Public origin of the hosted pages, sandbox environment'),
    port_base: intIn(1, 65_532)
      .optional()
      .describe(
        'Moves the four public URLs to four consecutive ports, in the order above (4000: 4000, 4001, 4002, 4003), keeping their scheme and host; a URL set in its own environment variable keeps its port',
      ),
    listen: z.array(listenAddress).optional().describe('host:port pairs to listen on; unset, the ports follow from the four URLs'),
    tls_cert: z.string().min(1).optional().describe("PEM certificate file for the process's own TLS (set together with tls_key)"),
    tls_key: z.string().min(1).optional().describe("PEM private key file for the process's own TLS (set together with tls_cert)"),
    trusted_proxies: z
      .array(cidr)
      .describe('IPs or CIDRs (IPv4 and IPv6) of the proxies whose X-Forwarded-For, X-Forwarded-Proto and X-Request-Id are believed'),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).describe('pino log level, or silent'),
    workers: workerCount.describe(
      'Server processes sharing the listeners (node:cluster): `1` is one process and no cluster; `auto` is one per core. Above 1 a primary process migrates, seeds and holds the database, then forks that many workers and replaces one that dies; see docs/operations.md, Scaling out',
    ),
    shutdown_grace_seconds: intIn(0, 600).describe('How long SIGTERM waits for in-flight requests and webhook attempts'),
    demo_data: booleanLike.describe('Seed the demo data on first start (dev profile; refused in production)'),
    password_memory_kib: intIn(19_456, 4_194_304).describe("argon2id memory cost in KiB (OWASP's minimum is the floor)"),
    password_time_cost: intIn(2, 100).describe('argon2id iterations'),
    password_parallelism: intIn(1, 16).describe('argon2id parallelism'),
    clients_file: z
      .string()
      .min(1)
      .describe('The client registry, source of truth for registered clients; processes sharing a database must share it'),
    clients_poll_seconds: intIn(1, 60).describe('How often a running server re-reads the clients file'),
    refresh_reuse_grace_seconds: intIn(0, 300).describe(
      'A duplicate refresh-token presentation inside this window gets the same new pair instead of revoking the authorization',
    ),
    ip_restricted_areas: z
      .array(z.enum(['fdx', 'donations', 'grants', 'nonprofits']))
      .describe("API areas that require the caller's address inside the client's IP allow-list"),
    secrets_key: z
      .string()
      .min(32)
      .optional()
      .describe(
        '32 random bytes, base64, sealing the secrets kept in the database (signing keys, server keys, webhook secrets); every process sharing a database, the admin CLI included, needs the same value; unset, a key file in data_dir',
      ),
    smtp_url: z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional()
      .describe(
        'SMTP server for all outgoing mail (smtp:// or smtps://; resets, invitations, second-factor notices, DAF codes); required in production; unset in dev, mail goes into the outbound_mail table (`admin mail list`)',
      ),
    mail_from: z
      .string()
      .min(3)
      .describe(
        'From address of outgoing mail; required in production (the default, at the reserved .invalid domain, is for the dev profile)',
      ),
    passkey_rp_id: z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'must be a lowercase domain name, such as example.org',
      )
      .optional()
      .describe(
        'The WebAuthn relying-party ID of passkeys: a domain both dashboard hosts are at or under (e.g. example.org), so a passkey added on one dashboard works on both; unset, each dashboard uses its own host name and a passkey works where it was added',
      ),
    webhook_retry_seconds: z
      .array(
        z.coerce
          .number()
          .int()
          .min(1)
          .max(7 * 86_400),
      )
      .min(0)
      .max(20)
      .describe('Delays between webhook attempts (attempts = 1 + delays)'),
    webhook_timeout_ms: intIn(100, 60_000).describe('Deadline of a whole webhook attempt (connect, headers and body)'),
    webhook_poll_ms: intIn(50, 60_000).describe('How often the webhook dispatcher looks for due deliveries'),
    webhook_in_flight_per_organization: intIn(1, 16).describe(
      'Webhook attempts in flight at once for one organization, over every process (of 16 per process); see docs/security.md',
    ),
    webhook_in_flight_per_subscription: intIn(1, 16).describe(
      'Webhook attempts in flight at once for one subscription, over every process',
    ),
    webhook_pause_after_failures: intIn(1, 10_000).describe(
      'Failed webhook attempts in a row that pause a subscription (status requires_attention) until it is resumed',
    ),
    max_disbursement_cents: intIn(1, 10_000_000_000).describe(
      'The largest disbursement a grantmaker may create, in cents (at most 10000000000, $100,000,000); a larger amount is a 400 naming amount',
    ),
    storage: z
      .enum(['folder', 's3'])
      .describe(
        'Object storage of mail batches and scans (docs/gift-processing.md, "Object storage"): `folder` (storage_dir; Almoner serves the upload URLs itself) or `s3` (an S3 or S3-compatible bucket; every process and host shares it)',
      ),
    storage_dir: z.string().min(1).optional().describe('The folder of the folder storage; unset, <data_dir>/objects'),
    s3_bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens')
      .optional()
      .describe('The bucket of the s3 storage (required with storage s3)'),
    s3_region: z
      .string()
      .regex(/^[a-z0-9-]{2,40}$/, 'must be a region name such as us-east-1')
      .optional()
      .describe('The region of the bucket (required with storage s3)'),
    s3_endpoint: originUrl.optional().describe("The endpoint of an S3-compatible service (MinIO, R2, …); unset, AWS's own for the region"),
    s3_force_path_style: booleanLike.describe(
      'Address the bucket in the path (https://endpoint/bucket/key) rather than the host name: most S3-compatible services need it',
    ),
    s3_access_key_id: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The access key of the s3 storage (set with s3_secret_access_key); unset, the AWS SDK's default credential chain (environment, profile, instance or task role)",
      ),
    s3_secret_access_key: z.string().min(1).optional().describe('The secret of s3_access_key_id; never logged'),
    mail_batch_max_bytes: intIn(1, 4_294_967_296).describe(
      'The largest mail batch a lockbox provider may upload, in bytes (512 MiB by default); a larger upload is refused (413) and nothing is kept',
    ),
    metrics_listen: listenAddress
      .optional()
      .describe(
        'host:port of a plain-HTTP listener of its own for /metrics, /healthz and /readyz; the API hosts then answer 404 for /metrics',
      ),
    metrics_allow: z.array(cidr).describe('Who may read /metrics (IPs or CIDRs); an empty list turns the endpoint off'),
    ready_file: z
      .string()
      .min(1)
      .optional()
      .describe('Where to write, once every listener is bound, the URLs and addresses served (JSON; removed at shutdown)'),
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
    ctx.addIssue({
      code: 'custom',
      path: ['base_url'],
      message: 'the four public URLs (base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url) must all differ',
    });
  }
  const ephemeral = PUBLIC_URL_KEYS.find((key) => hasEphemeralPort(config[key]));
  if (ephemeral && config.listen && config.listen.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: [ephemeral],
      message: 'port 0 (an ephemeral port) in a public URL needs listen unset: the port bound for the URL is the one it names',
    });
  }
  if (config.metrics_listen && !config.metrics_listen.endsWith(':0') && config.listen?.includes(config.metrics_listen)) {
    ctx.addIssue({
      code: 'custom',
      path: ['metrics_listen'],
      message: 'must differ from every listen address (it is a listener of its own)',
    });
  }
  if (config.passkey_rp_id) {
    const rpId = config.passkey_rp_id;
    for (const key of ['dashboard_url', 'sandbox_dashboard_url'] as const) {
      const host = URL.canParse(config[key]) ? new URL(config[key]).hostname : '';
      if (host !== rpId && !host.endsWith(`.${rpId}`))
        ctx.addIssue({ code: 'custom', path: ['passkey_rp_id'], message: `must be the host of ${key} (${host}) or a domain it is under` });
    }
  }
  if ((config.tls_cert === undefined) !== (config.tls_key === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [config.tls_cert ? 'tls_key' : 'tls_cert'],
      message: 'tls_cert and tls_key must be set together',
    });
  }
  if (config.storage === 's3') {
    for (const key of ['s3_bucket', 's3_region'] as const) {
      if (!config[key]) ctx.addIssue({ code: 'custom', path: [key], message: `is required with storage "s3" (${envNameFor(key)})` });
    }
  }
  if ((config.s3_access_key_id === undefined) !== (config.s3_secret_access_key === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [config.s3_access_key_id ? 's3_secret_access_key' : 's3_access_key_id'],
      message: "s3_access_key_id and s3_secret_access_key must be set together (or neither, for the AWS SDK's default credential chain)",
    });
  }
  if (config.profile !== 'production') return;
  // The production profile refuses to start without what makes it safe; every gap is named at once.
  if (!config.database_url) {
    ctx.addIssue({
      code: 'custom',
      path: ['database_url'],
      message: 'is required in the production profile (an external PostgreSQL server)',
    });
  }
  if (!config.smtp_url) {
    // Mail can always be sent (password resets, invitations, DAF one-time codes): production never keeps it in a table.
    ctx.addIssue({
      code: 'custom',
      path: ['smtp_url'],
      message:
        'is required in the production profile (an smtp:// or smtps:// URL): password resets, invitations and DAF codes are sent by mail',
    });
  }
  if (/\.invalid>?\s*$/i.test(config.mail_from)) {
    // The default's reserved .invalid domain suits the dev profile's mail table; real mail from it is refused or lost.
    ctx.addIssue({
      code: 'custom',
      path: ['mail_from'],
      message: `is required in the production profile (ALMONER_MAIL_FROM): the From address of password resets, invitations and DAF codes, at a domain the SMTP server may send for, such as "Almoner <no-reply@example.org>"; "${config.mail_from}" is the dev profile's placeholder`,
    });
  }
  if (!config.tls_cert && config.trusted_proxies.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['tls_cert'],
      message:
        'HTTPS is required in the production profile: set tls_cert and tls_key (ALMONER_TLS_CERT, ALMONER_TLS_KEY) or trusted_proxies (ALMONER_TRUSTED_PROXIES) for a TLS-terminating proxy',
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

/** Settings whose value is never repeated in an error message (a password in a URL, the secrets key). */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set(['database_url', 'secrets_key', 'smtp_url', 's3_secret_access_key']);

/** Settings whose environment value is a comma-separated list. */
export const LIST_SETTINGS: ReadonlySet<string> = new Set([
  'listen',
  'trusted_proxies',
  'ip_restricted_areas',
  'webhook_retry_seconds',
  'metrics_allow',
]);

/** The environment variable that overrides a setting. */
export function envNameFor(key: string): string {
  if (key === 'database_url') return 'DATABASE_URL';
  return `ALMONER_${key.toUpperCase()}`;
}

export const SETTING_KEYS: readonly string[] = Object.keys(settingsShape.shape);

/** port_base's own rule, which config/load.ts applies before the whole schema (it moves the URLs the schema then checks). */
export const portBaseSchema = settingsShape.shape.port_base;

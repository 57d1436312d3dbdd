/**
 * `npm run docs:config`: writes docs/configuration.md from the configuration schema
 * (src/config/schema.ts: every setting, its environment variable, type and description),
 * the checked-in defaults (config/default.json, config/production.json) and the clients file's
 * schema (src/oidc/clients/schema.ts). test/docs/configuration-doc.test.ts fails when the
 * committed file differs from what this prints, so the reference cannot drift from the code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DEFAULT_CONFIG_DIR, PROJECT_ROOT } from '../src/config/paths.js';
import { configSchema, envNameFor, LIST_SETTINGS, SETTING_KEYS } from '../src/config/schema.js';
import { clientEntrySchema } from '../src/oidc/clients/schema.js';

export const CONFIGURATION_DOC = path.join(PROJECT_ROOT, 'docs', 'configuration.md');

interface JsonSchema {
  type?: string;
  const?: unknown;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

function inputSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

function code(value: unknown): string {
  return `\`${String(value)}\``;
}

/** A type in words: `integer, 1–200`, `one of `a`, `b``, `list of …`. */
function describeType(schema: JsonSchema): string {
  if (schema.enum) return `one of ${schema.enum.map(code).join(', ')}`;
  if (schema.const !== undefined) return code(schema.const);
  if (schema.anyOf) return schema.anyOf.map(describeType).join(' or ');
  if (schema.type === 'array') {
    const bounds =
      schema.maxItems !== undefined ? ` (at most ${schema.maxItems})` : schema.minItems ? ` (at least ${schema.minItems})` : '';
    return `list${bounds} of ${schema.items ? describeType(schema.items) : 'values'}`;
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const range = schema.minimum !== undefined && schema.maximum !== undefined ? `, ${schema.minimum}–${schema.maximum}` : '';
    return `${schema.type}${range}`;
  }
  if (schema.type === 'string') {
    if (schema.minLength !== undefined && schema.minLength > 1) return `string, at least ${schema.minLength} characters`;
    if (schema.maxLength !== undefined) return `string, at most ${schema.maxLength} characters`;
    return 'string';
  }
  return schema.type ?? 'value';
}

function formatValue(value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : code(value.join(','));
  return code(value);
}

/** Markdown table cells must not break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');
}

function readDefaults(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(DEFAULT_CONFIG_DIR, file), 'utf8')) as Record<string, unknown>;
}

function describedOrThrow(where: string, key: string, schema: JsonSchema): string {
  if (!schema.description) throw new Error(`${where}: ${key} has no description: add .describe('…') to it in the schema`);
  return schema.description;
}

function settingsTable(): string[] {
  const json = inputSchema(configSchema);
  const dev = readDefaults('default.json');
  const production = { ...dev, ...readDefaults('production.json') };
  const rows = ['| setting | environment variable | type | default (dev) | default (production) | meaning |', '|---|---|---|---|---|---|'];
  for (const key of SETTING_KEYS) {
    const schema = json.properties?.[key];
    if (!schema) throw new Error(`src/config/schema.ts: ${key} is missing from the JSON schema`);
    const description = describedOrThrow('src/config/schema.ts', key, schema);
    const type = describeType(schema) + (LIST_SETTINGS.has(key) ? ' (comma-separated in the environment)' : '');
    const [devDefault, productionDefault] = key === 'profile' ? ['`dev`', '—'] : [formatValue(dev[key]), formatValue(production[key])];
    rows.push(
      `| ${code(key)} | ${code(key === 'profile' ? 'ALMONER_PROFILE' : envNameFor(key))} | ${cell(type)} | ${cell(devDefault)} | ${cell(productionDefault)} | ${cell(description)} |`,
    );
  }
  return rows;
}

function clientsTable(): string[] {
  const json = inputSchema(clientEntrySchema);
  const required = new Set(json.required ?? []);
  const rows = ['| field | type | required | meaning |', '|---|---|---|---|'];
  for (const [key, schema] of Object.entries(json.properties ?? {})) {
    const description = describedOrThrow('src/oidc/clients/schema.ts', key, schema);
    const need = required.has(key) ? 'yes' : schema.default !== undefined ? `no (default ${formatValue(schema.default)})` : 'no';
    rows.push(`| ${code(key)} | ${cell(describeType(schema))} | ${cell(need)} | ${cell(description)} |`);
  }
  return rows;
}

/** The whole of docs/configuration.md. */
export function renderConfigurationDoc(): string {
  return `${[
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` (scripts/gen-config-doc.ts) from src/config/schema.ts,',
    "     config/*.json and src/oidc/clients/schema.ts. Do not edit by hand: change the schema's",
    '     descriptions or the generator, then run `npm run docs:config`. -->',
    '',
    '`config/default.json` (checked in) is overridden by `config/<profile>.json`,',
    'which is overridden by environment variables; the result is validated once',
    'at start with a schema and frozen. Every invalid value is reported with its',
    'key, where it came from (the environment variable or the config file), what',
    'the setting expects and, for a value of the wrong kind, the value written',
    '(never that of `database_url`, `smtp_url` or `secrets_key`), and the',
    'process exits with status 2 without starting, e.g.:',
    '',
    '```',
    'almoner: invalid configuration:',
    '  - base_url (from ALMONER_BASE_URL): must be an absolute URL such as https://api.example.org',
    '  - shutdown_grace_seconds (from ALMONER_SHUTDOWN_GRACE_SECONDS): must be a whole number from 0 to 600, got "soon"',
    '```',
    '',
    '`ALMONER_CONFIG_DIR` points at another config directory. An `ALMONER_*`',
    'variable that matches no setting (a typo) stops the dev profile the same way,',
    'naming the closest setting (`ALMONER_BASEURL (environment): is not a known',
    'setting; did you mean ALMONER_BASE_URL?`); the production profile only logs',
    'it as a warning, with the same suggestion, because an orchestrator may add',
    '`ALMONER_*` variables of its own (Kubernetes does, for a service named',
    '`almoner`). A list setting is a JSON array in a config file and a',
    'comma-separated value in the environment.',
    '',
    '## Settings',
    '',
    ...settingsTable(),
    '',
    'The production profile also refuses to start, naming every gap at once,',
    'without `database_url`, without HTTPS (`tls_cert` and `tls_key`, or',
    '`trusted_proxies`), without `smtp_url` (mail is never kept in a table',
    'there; see [Mail](operations.md#mail)), with a public URL that is not',
    '`https`, or with `demo_data`; see',
    '[the production profile](operations.md#production-profile).',
    '',
    '## Moving the ports',
    '',
    'The four public URLs default to ports 3000 to 3003 on 127.0.0.1. To move them',
    'all, set one variable: `ALMONER_PORT_BASE=4000 npm start` serves on 4000 to',
    '4003, in the order of the table above (API, sandbox API, dashboard, sandbox',
    'dashboard), each URL keeping its scheme and host; the banner, the issuers and',
    'the links follow. A URL set in its own variable (`ALMONER_BASE_URL` …) keeps',
    'the port it names. Before anything else starts (the embedded PostgreSQL,',
    'migrations, the demo seed), every port to be listened on is tried, and one',
    'line names every one that is taken and the settings that move it.',
    '',
    '## Port 0 and the ready file',
    '',
    'A public URL may name port 0 (e.g. `ALMONER_BASE_URL=http://127.0.0.1:0`,',
    'with `listen` unset): the server binds an ephemeral port for it before anything',
    'else, and everything built from the URL (the issuer, host dispatch, the banner)',
    'uses the bound port; each port-0 URL gets a port of its own. `listen` entries',
    'may name port 0 too. A launcher learns the ports from `ready_file`: once every',
    'listener is bound the server writes there (atomically) one JSON object,',
    '`{"pid", "profile", "urls": {"base_url", "sandbox_base_url", "dashboard_url", "sandbox_dashboard_url"}, "listening": [{"host", "port"}, …], "metrics_listening"}`,',
    'and removes it at shutdown. The tests start every server this way, so no port',
    'is picked first and bound later (another process could take it in between).',
    '',
    '## The clients file',
    '',
    '`clients_file` (`ALMONER_CLIENTS_FILE`, default `./config/clients.json`) holds',
    '`{"revision": 7, "clients": [ … ]}`, one object per registered client. The admin',
    'commands write it (see [Clients](oauth.md#clients)) with the registry revision it',
    'holds; a hand edit is validated and picked up within `clients_poll_seconds` (an',
    'older or diverging copy is never applied: see',
    '[The clients file across machines](operations.md#the-clients-file-across-machines)).',
    '`revision` is optional (a whole number from 1); set it above the current one to',
    'replace the registry on purpose. Each entry has these fields and no others:',
    '',
    ...clientsTable(),
    '',
  ].join('\n')}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(CONFIGURATION_DOC, renderConfigurationDoc());
  process.stdout.write(`wrote ${path.relative(PROJECT_ROOT, CONFIGURATION_DOC)}\n`);
}

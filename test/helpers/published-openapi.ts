import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * Validates responses against the published OpenAPI documents in shared/spec/openapi, so a
 * client written against the published API works unchanged.
 */
const SPEC_DIR = path.resolve(PROJECT_ROOT, '..', 'shared', 'spec', 'openapi');
export type PublishedDocument = '2026-04-01' | '2026-01-15' | '2023-01-01' | 'fdx-v6';

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
for (const format of ['int32', 'int64', 'integer', 'double', 'float', 'decimal', 'url', 'byte', 'binary', 'password']) ajv.addFormat(format, true);
const loaded = new Set<string>();
const cache = new Map<string, ValidateFunction>();

function load(name: PublishedDocument): void {
  if (loaded.has(name)) return;
  const doc = YAML.parse(fs.readFileSync(path.join(SPEC_DIR, `${name}.yaml`), 'utf8')) as Record<string, unknown>;
  ajv.addSchema(doc, name);
  loaded.add(name);
}

function pointer(parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** The JSON schema of an operation's response (following a $ref to components/responses). */
function responseSchemaRef(name: PublishedDocument, apiPath: string, method: string, status: number, mediaType: string): string {
  const doc = ajv.getSchema(name)!.schema as { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>>; components: { responses: Record<string, unknown> } };
  const response = doc.paths[apiPath]?.[method]?.responses[String(status)];
  if (!response) throw new Error(`${name}: no ${method.toUpperCase()} ${apiPath} ${status} response`);
  const base = response.$ref ? response.$ref.replace(/^#\//, '').split('/') : ['paths', apiPath, method, 'responses', String(status)];
  return `${name}#/${pointer([...base, 'content', mediaType, 'schema'])}`;
}

export function validatePublished(name: PublishedDocument, apiPath: string, method: string, status: number, body: unknown, mediaType = status >= 400 ? 'application/problem+json' : 'application/json'): string[] {
  load(name);
  const ref = responseSchemaRef(name, apiPath, method, status, mediaType);
  let validate = cache.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    cache.set(ref, validate);
  }
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
}

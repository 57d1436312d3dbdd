import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { isApiKeyShaped } from '../../src/api-keys/format.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { buildOpenApiDocument } from '../../src/gateway/openapi.js';
import { API_VERSIONS, DEFAULT_API_VERSION, type ApiVersion } from '../../src/gateway/routing/versions.js';
import type { GatewayExchange } from './published-openapi.js';

/**
 * Validates gateway responses against our own /openapi.json (the document the API host
 * serves for the request's Api-Version): the operation must document the status, the media
 * type, and for JSON the body's schema; a success must have been reached with a credential
 * the operation's `security` lists. The request helpers run it beside the check against the
 * published documents (published-openapi.ts), so a route that answers a status its spec does
 * not declare fails the test that saw it.
 */

interface Response {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, Response>;
}
export interface ServedDocument {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Response> };
}

/** One request and response, as the published-document check takes it (credentials are read here too). */
export type ServedExchange = GatewayExchange;

/** What a method and path the document has no operation for may answer (the generic problems). */
const UNDOCUMENTED_PATH_STATUSES = [404, 405];

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
const validators = new WeakMap<ServedDocument, Map<string, ValidateFunction>>();
const schemaIds = new WeakMap<ServedDocument, string>();
let nextId = 0;

/** The document the gateway serves for `version` (what GET /openapi.json returns, but for the server URL). */
const generated = new Map<ApiVersion, ServedDocument>();
export function generatedDocument(version: ApiVersion): ServedDocument {
  let doc = generated.get(version);
  if (!doc) {
    doc = buildOpenApiDocument(GATEWAY_ROUTES, version, 'http://api.invalid') as unknown as ServedDocument;
    generated.set(version, doc);
  }
  return doc;
}

/** The Api-Version whose document speaks for a request: the header's, else the default (FDX paths, unknown values). */
export function documentVersion(path: string, requestHeaders: ServedExchange['requestHeaders']): ApiVersion {
  const pathname = new URL(path, 'http://x').pathname;
  if (pathname === '/fdx/v6' || pathname.startsWith('/fdx/v6/')) return DEFAULT_API_VERSION;
  const value = header(requestHeaders, 'api-version')?.trim();
  return value && (API_VERSIONS as readonly string[]).includes(value) ? (value as ApiVersion) : DEFAULT_API_VERSION;
}

function header(headers: ServedExchange['requestHeaders'], name: string): string | undefined {
  return Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
}

/**
 * The path template of `paths` that `concrete` matches with `method` (literal segments beat
 * parameters): the matching both the published and the served document checks use.
 */
export function pathTemplate(paths: Record<string, Record<string, unknown>>, method: string, concrete: string): string | undefined {
  const parts = concrete.split('/');
  let best: { template: string; literals: number } | undefined;
  for (const [template, operations] of Object.entries(paths)) {
    if (!operations[method]) continue;
    const pattern = template.split('/');
    if (pattern.length !== parts.length) continue;
    let literals = 0;
    const matches = pattern.every((segment, i) => {
      if (/^\{[^}]+\}$/.test(segment)) return parts[i] !== '';
      literals += 1;
      return segment === parts[i];
    });
    if (matches && (!best || literals > best.literals)) best = { template, literals };
  }
  return best?.template;
}

function pointer(parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function validateAt(doc: ServedDocument, path: string[], body: unknown): string[] {
  let id = schemaIds.get(doc);
  if (!id) {
    id = `served-${(nextId += 1)}`;
    ajv.addSchema(doc, id);
    schemaIds.set(doc, id);
    validators.set(doc, new Map());
  }
  const ref = `${id}#/${pointer(path)}`;
  const cache = validators.get(doc)!;
  let validate = cache.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    cache.set(ref, validate);
  }
  return validate(body)
    ? []
    : (validate.errors ?? []).map(
        (e) =>
          `${e.instancePath || '(root)'} ${e.message ?? ''}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`,
      );
}

/** Throws unless `doc` (the served /openapi.json of the request's version) documents the response. */
export function checkServedResponse(
  exchange: ServedExchange,
  doc: ServedDocument = generatedDocument(documentVersion(exchange.path, exchange.requestHeaders)),
): void {
  const method = exchange.method.toLowerCase();
  const concrete = new URL(exchange.path, 'http://x').pathname.replace(/(.)\/$/, '$1');
  const mediaType = (exchange.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const where = `our /openapi.json (${doc.info.version})`;
  const fail = (what: string, errors: string[] = []): never => {
    const start = exchange.text === undefined ? '(binary, not read)' : JSON.stringify(exchange.text.slice(0, 300));
    throw new Error(
      [
        `${exchange.method.toUpperCase()} ${exchange.path} → ${exchange.status} ${mediaType || '(no content type)'}: ${what}`,
        ...errors.map((e) => `  ${e}`),
        `  body: ${start}`,
      ].join('\n'),
    );
  };
  const json = (): unknown => {
    try {
      return JSON.parse(exchange.text ?? '');
    } catch {
      return fail('the body is not JSON');
    }
  };
  const problem = () => {
    if (mediaType !== 'application/problem+json') fail(`${where}: an error must be an application/problem+json problem document`);
    const errors = validateAt(doc, ['components', 'schemas', 'Problem'], json());
    if (errors.length > 0) fail(`does not match ${where}'s Problem schema`, errors);
  };

  const template = pathTemplate(doc.paths, method, concrete);
  if (!template) {
    // An unknown Api-Version is refused before routing, on any /v1 path.
    const unknownVersion =
      header(exchange.requestHeaders, 'api-version')?.trim() &&
      documentVersion(exchange.path, exchange.requestHeaders) !== header(exchange.requestHeaders, 'api-version')?.trim();
    const allowed = unknownVersion && !concrete.startsWith('/fdx/') ? [400, ...UNDOCUMENTED_PATH_STATUSES] : UNDOCUMENTED_PATH_STATUSES;
    if (!allowed.includes(exchange.status))
      fail(`${where} has no ${method.toUpperCase()} ${concrete}, so only ${allowed.join(' or ')} is expected`);
    return problem();
  }
  const name = `${method.toUpperCase()} ${template}`;
  const operation = doc.paths[template]![method]!;
  const documented = operation.responses[String(exchange.status)];
  if (!documented)
    fail(
      `${where} documents no ${exchange.status} response for ${name} (declare it in the route spec: status, errors, or operation-statuses.ts)`,
    );
  const base = documented!.$ref
    ? documented!.$ref.replace(/^#\//, '').split('/')
    : ['paths', template, method, 'responses', String(exchange.status)];
  const response = documented!.$ref ? doc.components.responses[base[base.length - 1]!] : documented;
  const mediaTypes = Object.keys(response?.content ?? {});
  // A response documented without content (a 204) must have none.
  const empty = mediaTypes.length === 0 && mediaType === '' && !exchange.text;
  if (!empty && !mediaTypes.includes(mediaType))
    fail(`${where} documents ${mediaTypes.join(', ') || 'no content'} for ${name} ${exchange.status}`);

  // A success was reached with one of the credentials the operation's security lists (checked
  // where the request's Authorization is known: the live helpers pass every header).
  const bearer = /^Bearer\s+(\S+)$/i.exec(header(exchange.requestHeaders, 'authorization')?.trim() ?? '')?.[1];
  if (exchange.status < 300 && bearer !== undefined && operation.security && operation.security.length > 0) {
    const scheme = isApiKeyShaped(bearer) ? 'apiKey' : 'accessToken';
    if (!operation.security.some((requirement) => scheme in requirement))
      fail(
        `${name} succeeded with ${scheme === 'apiKey' ? 'an API key' : 'an access token'}, which its security (${JSON.stringify(operation.security)}) does not list`,
      );
  }

  if (!/^application\/(.+\+)?json$/.test(mediaType)) return;
  const errors = validateAt(doc, [...base, 'content', mediaType, 'schema'], json());
  if (errors.length > 0) fail(`does not match ${where} ${name} ${exchange.status}`, errors);
}

/**
 * The document an API host serves for one Api-Version, fetched once per host and version,
 * with the request's other headers (X-Forwarded-Proto in the production profile) but no
 * credential or body type.
 */
const served = new Map<string, Promise<ServedDocument>>();
export function servedDocument(
  apiOrigin: string,
  version: ApiVersion,
  requestHeaders: Record<string, string> = {},
): Promise<ServedDocument> {
  const key = `${apiOrigin} ${version}`;
  let doc = served.get(key);
  if (!doc) {
    const headers = Object.fromEntries(
      Object.entries(requestHeaders).filter(
        ([name]) => !['authorization', 'content-type', 'api-version', 'accept'].includes(name.toLowerCase()),
      ),
    );
    doc = fetch(`${apiOrigin}/openapi.json`, { headers: { ...headers, 'api-version': version } }).then(async (response) => {
      if (response.status !== 200) throw new Error(`GET ${apiOrigin}/openapi.json (${version}) → ${response.status}`);
      return (await response.json()) as ServedDocument;
    });
    doc.catch(() => served.delete(key));
    served.set(key, doc);
  }
  return doc;
}

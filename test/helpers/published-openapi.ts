import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { API_VERSIONS, DEFAULT_API_VERSION } from '../../src/gateway/routing/versions.js';
import { checkServedResponse, pathTemplate, type ServedDocument } from './served-openapi.js';
import {
  addedStatus,
  BORROWED_OPERATIONS,
  FDX_CONSENT_OPERATIONS,
  OWN_OPERATIONS,
  UNKNOWN_API_VERSION,
  UNKNOWN_OPERATION,
  type Operation,
} from './published-additions.js';

/**
 * Validates gateway responses against the published OpenAPI documents vendored in
 * spec/openapi, so a client written against the published API works unchanged. The request
 * helpers (apiGet, apiRequest, fdxDownload, …) call checkGatewayResponse on every response
 * they return; what the product deliberately adds is listed in published-additions.ts.
 */
export const SPEC_DIR = path.join(PROJECT_ROOT, 'spec', 'openapi');
export const PUBLISHED_DOCUMENTS = ['2026-04-01', '2026-01-15', '2023-01-01', 'fdx-v6'] as const;
export type PublishedDocument = (typeof PUBLISHED_DOCUMENTS)[number];

type Responses = Record<string, { $ref?: string; content?: Record<string, unknown> }>;
interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, { responses?: Responses }>>;
  components: { responses?: Record<string, { content?: Record<string, unknown> }> };
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
// OpenAPI's own formats, which say nothing a JSON type does not.
for (const format of ['int32', 'int64', 'integer', 'double', 'float', 'decimal', 'url', 'byte', 'binary', 'password'])
  ajv.addFormat(format, true);
const documents = new Map<PublishedDocument, OpenApiDocument>();
const validators = new Map<string, ValidateFunction>();

export function readDocument(name: PublishedDocument): OpenApiDocument {
  let doc = documents.get(name);
  if (!doc) {
    doc = YAML.parse(fs.readFileSync(path.join(SPEC_DIR, `${name}.yaml`), 'utf8')) as OpenApiDocument;
    ajv.addSchema(doc, name);
    documents.set(name, doc);
  }
  return doc;
}

function pointer(parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** Errors of `body` against the schema at `ref` (`<document>#/json/pointer`), as readable lines. */
function validateRef(ref: string, body: unknown): string[] {
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate(body)
    ? []
    : (validate.errors ?? []).map(
        (e) =>
          `${e.instancePath || '(root)'} ${e.message ?? ''}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`,
      );
}

/** A documented response (following a $ref to components/responses): its JSON pointer and media types. */
function documentedResponse(
  name: PublishedDocument,
  template: string,
  method: string,
  status: number,
): { base: string[]; mediaTypes: string[] } | undefined {
  const doc = readDocument(name);
  const response = doc.paths[template]?.[method]?.responses?.[String(status)];
  if (!response) return undefined;
  const base = response.$ref ? response.$ref.replace(/^#\//, '').split('/') : ['paths', template, method, 'responses', String(status)];
  const resolved = response.$ref ? doc.components.responses?.[base[base.length - 1]!] : response;
  return { base, mediaTypes: Object.keys(resolved?.content ?? {}) };
}

/** Errors of `body` against an operation's documented response (a unit check; the helpers use checkGatewayResponse). */
export function validatePublished(
  name: PublishedDocument,
  template: string,
  method: string,
  status: number,
  body: unknown,
  mediaType = status >= 400 ? 'application/problem+json' : 'application/json',
): string[] {
  const response = documentedResponse(name, template, method, status);
  if (!response) throw new Error(`${name}: no ${method.toUpperCase()} ${template} ${status} response`);
  return validateRef(`${name}#/${pointer([...response.base, 'content', mediaType, 'schema'])}`, body);
}

/** The path prefix of a document's server URL: '/fdx/v6' for FDX, '' for the main API. */
function serverPath(name: PublishedDocument): string {
  const url = readDocument(name).servers?.[0]?.url;
  return url ? new URL(url).pathname.replace(/\/$/, '') : '';
}

/** The document's path template that `concrete` matches with `method` (literal segments beat parameters). */
export function matchTemplate(name: PublishedDocument, method: string, concrete: string): string | undefined {
  return pathTemplate(readDocument(name).paths, method, concrete);
}

export interface GatewayExchange {
  method: string;
  /** The request path, with or without its query string (a full URL works too). */
  path: string;
  /** The request's headers (only Api-Version is read). */
  requestHeaders?: Record<string, string | undefined>;
  status: number;
  contentType: string | null | undefined;
  /** The response body as text; undefined for a binary body that is not read here. */
  text: string | undefined;
}

/** Is this a path the gateway serves (and so one the published documents speak for)? */
export function isGatewayPath(requestPath: string): boolean {
  const p = new URL(requestPath, 'http://x').pathname;
  return p === '/v1' || p.startsWith('/v1/') || p === '/fdx/v6' || p.startsWith('/fdx/v6/') || OWN_OPERATIONS.some((o) => o.path === p);
}

function header(headers: GatewayExchange['requestHeaders'], name: string): string | undefined {
  const entry = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return entry?.[1];
}

/**
 * Throws unless the response is one the published operation serving the request documents
 * (status, media type, and for JSON the body's schema), or one published-additions.ts lists;
 * and unless our own /openapi.json for the request's Api-Version documents it too
 * (served-openapi.ts): `served` when the caller fetched it from the host, else the document
 * the gateway generates, which is what it serves.
 */
export function checkGatewayResponse(exchange: GatewayExchange, served?: ServedDocument): void {
  checkPublishedResponse(exchange);
  checkServedResponse(exchange, served);
}

function checkPublishedResponse(exchange: GatewayExchange): void {
  const method = exchange.method.toLowerCase();
  // The router is not strict about one trailing slash; neither is the match.
  const concrete = new URL(exchange.path, 'http://x').pathname.replace(/(.)\/$/, '$1');
  const mediaType = (exchange.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const request = `${exchange.method.toUpperCase()} ${exchange.path}`;
  const fail = (what: string, errors: string[] = []): never => {
    const start = exchange.text === undefined ? '(binary, not read)' : JSON.stringify(exchange.text.slice(0, 300));
    throw new Error(
      [
        `${request} → ${exchange.status} ${mediaType || '(no content type)'}: ${what}`,
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

  const own = OWN_OPERATIONS.find((o) => o.method === method && o.path === concrete);
  let document: PublishedDocument;
  let relative = concrete;
  const fdxBase = serverPath('fdx-v6');
  if (concrete === fdxBase || concrete.startsWith(`${fdxBase}/`)) {
    // Versioned by its path: Api-Version is not read there.
    document = 'fdx-v6';
    relative = concrete.slice(fdxBase.length) || '/';
    const consent = FDX_CONSENT_OPERATIONS.find(
      (o) => o.method === method && pathTemplate({ [o.path]: { [method]: {} } }, method, relative),
    );
    if (consent) return exchange.status >= 400 ? checkProblem(document, exchange.status, mediaType, json, fail) : undefined;
  } else {
    const version = header(exchange.requestHeaders, 'api-version')?.trim() || DEFAULT_API_VERSION;
    if (!(API_VERSIONS as readonly string[]).includes(version)) {
      // Refused before routing, on every versioned path: see UNKNOWN_API_VERSION.
      if (exchange.status !== UNKNOWN_API_VERSION.status)
        fail(`Api-Version ${JSON.stringify(version)} is unknown, so only ${UNKNOWN_API_VERSION.status} is expected`);
      return checkProblem(DEFAULT_API_VERSION, exchange.status, mediaType, json, fail);
    }
    document = version as PublishedDocument;
    if (own) {
      if (exchange.status !== 200 || mediaType !== 'application/json')
        fail(`${own.path} (published-additions.ts) answers 200 application/json only`);
      const errors = validateSchema(own.schema, json());
      if (errors.length > 0) fail(`does not match the schema of ${own.path} in published-additions.ts`, errors);
      return;
    }
    const borrowed = BORROWED_OPERATIONS.find((b) => b.method === method && matchTemplate(b.document, method, concrete) === b.path);
    if (borrowed) document = borrowed.document;
  }

  const template = matchTemplate(document, method, relative);
  if (!template) {
    // No such operation in this document: only the product's generic 404 (UNKNOWN_OPERATION).
    if (!UNKNOWN_OPERATION.statuses.includes(exchange.status))
      fail(`${document} has no ${method.toUpperCase()} ${relative}, so only ${UNKNOWN_OPERATION.statuses.join(' or ')} is expected`);
    return checkProblem(document, exchange.status, mediaType, json, fail);
  }
  const operation: Operation = { document, method, path: template };
  const name = `${document} ${method.toUpperCase()} ${template}`;
  const response = documentedResponse(document, template, method, exchange.status);
  if (!response) {
    if (!addedStatus(operation, exchange.status))
      fail(`${name} documents no ${exchange.status} response, and published-additions.ts lists none`);
    return checkProblem(document, exchange.status, mediaType, json, fail);
  }
  // A response documented without content (the simulations' 202, the suggestion uploads' 200) must have none.
  if (response.mediaTypes.length === 0) {
    if (mediaType !== '' || (exchange.text ?? '') !== '') fail(`${name} ${exchange.status} documents no content`);
    return;
  }
  if (!response.mediaTypes.includes(mediaType)) fail(`${name} ${exchange.status} documents ${response.mediaTypes.join(', ')}`);
  // Binary representations (statement files): the media type is all a schema could say.
  if (!/^application\/(.+\+)?json$/.test(mediaType)) return;
  const body = json();
  const errors = validateRef(`${document}#/${pointer([...response.base, 'content', mediaType, 'schema'])}`, body);
  if (errors.length > 0) fail(`does not match ${name} ${exchange.status}`, errors);
  problemStatus(body, exchange.status, mediaType, fail);
}

/** An added or generic problem: the document's own ProblemDetails schema. */
function checkProblem(
  document: PublishedDocument,
  status: number,
  mediaType: string,
  json: () => unknown,
  fail: (what: string, errors?: string[]) => never,
): void {
  if (mediaType !== 'application/problem+json') fail('an added response must be an application/problem+json problem document');
  const body = json();
  const errors = validateRef(`${document}#/components/schemas/ProblemDetails`, body);
  if (errors.length > 0) fail(`does not match ${document}'s ProblemDetails`, errors);
  problemStatus(body, status, mediaType, fail);
}

/** RFC 9457: a problem's `status` is the response's status. */
function problemStatus(body: unknown, status: number, mediaType: string, fail: (what: string) => never): void {
  if (mediaType === 'application/problem+json' && (body as { status?: unknown }).status !== status)
    fail(`the problem's status member is not ${status}`);
}

const ownValidators = new WeakMap<object, ValidateFunction>();
function validateSchema(schema: object, body: unknown): string[] {
  let validate = ownValidators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    ownValidators.set(schema, validate);
  }
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
}

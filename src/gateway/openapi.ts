import { z } from 'zod';
import { FDX_SCOPES } from '../accounts/scopes.js';
import { callerKindsInWords } from './auth/require-caller-kind.js';
import { ERROR_CODE_NAMES } from '../errors/codes.js';
import { STATUS_TITLES } from '../http/problem.js';
import { acceptedCredentials } from './auth/accept-credentials.js';
import { IDEMPOTENCY_HEADER } from '../idempotency/key.js';
import { REPLAYED_HEADER } from './routing/idempotent.js';
import { errorStatuses, successStatus } from './operation-statuses.js';
import type { RouteSpec } from './routing/route-spec.js';
import type { ApiVersion } from './routing/versions.js';

const REQUIRED_SCOPE: Record<RouteSpec['access'], string> = {
  read: 'read_only or read_write',
  write: 'read_write',
  fdx: 'read_only and exactly one of read:bank_accounts, sync:connected_accounts',
  recipient: "none (the data recipient's own token carries no scope)",
};

/** The scope sets an access token may hold for each kind of access (auth/require-scope.ts), as alternatives. */
const TOKEN_SCOPES: Record<RouteSpec['access'], string[][]> = {
  read: [['read_only'], ['read_write']],
  write: [['read_write']],
  fdx: FDX_SCOPES.map((scope) => ['read_only', scope]),
  recipient: [[]],
};

const CREDENTIAL_WORDS = {
  access_token: 'an OAuth access token',
  api_key: "an API key of the caller's organization",
  client_credentials: "the data recipient's own client-credentials token (a fapi2 client's, DPoP-bound: docs/bank-data.md)",
} as const;

/** Problem documents the error middleware renders, and the headers each status carries. */
const PROBLEM_HEADERS: Record<number, Record<string, unknown>> = {
  401: {
    'WWW-Authenticate': {
      required: true,
      description: 'Bearer realm="almoner", with error="invalid_token" when a credential was presented',
      schema: { type: 'string' },
    },
  },
  403: {
    'WWW-Authenticate': {
      description: 'Bearer, with error="insufficient_scope" and the scope needed, when the scope is what is missing',
      schema: { type: 'string' },
    },
  },
  429: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'string' } } },
  503: { 'Retry-After': { required: true, description: 'Seconds to wait before retrying', schema: { type: 'string' } } },
};

const REQUEST_ID = { 'X-Request-Id': { description: 'Quote it when reporting a problem', schema: { type: 'string' } } };

/** A zod schema as an OpenAPI 3.1 schema object (its dialect is the document's, so no $schema). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

function responseName(status: number): string {
  return (STATUS_TITLES[status] ?? `Status${status}`).replace(/[^A-Za-z]/g, '');
}

/** The scopes every alternative of `sets` holds: read_only or read_write holds none in common, FDX holds read_only. */
function commonScopes(sets: readonly string[][]): string[] {
  return sets.reduce((common, set) => common.filter((scope) => set.includes(scope)));
}

/**
 * One requirement per scheme the operation accepts. OpenAPI's requirement lists the scopes a
 * token must all hold, so the alternatives (read_only or read_write) cannot be separate
 * requirements of one scheme without a reader showing "accessToken or accessToken": the scheme
 * carries the scopes every alternative needs, and the description and x-required-scope say the rest.
 */
function security(spec: RouteSpec): Record<string, string[]>[] {
  const accepted = acceptedCredentials(spec);
  return [
    ...(accepted.includes('access_token') ? [{ accessToken: commonScopes(TOKEN_SCOPES[spec.access]) }] : []),
    ...(accepted.includes('api_key') ? [{ apiKey: [] }] : []),
    ...(accepted.includes('client_credentials') ? [{ clientToken: [] }] : []),
  ];
}

function describe(spec: RouteSpec): string {
  const accepted = acceptedCredentials(spec);
  const lines = [
    `Credential: ${accepted.map((k) => CREDENTIAL_WORDS[k]).join(' or ')}${accepted.includes('access_token') ? ` with ${REQUIRED_SCOPE[spec.access]}` : ''}.`,
  ];
  if (spec.callers) lines.push(`For ${callerKindsInWords(spec.callers)} only: any other caller is 403.`);
  if (spec.pathVersioned) lines.push('Versioned by its path: the Api-Version header is neither read nor echoed.');
  return lines.join('\n\n');
}

function operation(spec: RouteSpec, version: ApiVersion): Record<string, unknown> {
  const parameters: unknown[] = [];
  if (!spec.pathVersioned)
    parameters.push({
      name: 'Api-Version',
      in: 'header',
      required: false,
      description: `Defaults to the newest version; this document describes ${version}`,
      schema: { type: 'string', enum: [version] },
    });
  if (spec.idempotent)
    parameters.push({
      name: IDEMPOTENCY_HEADER,
      in: 'header',
      required: false,
      description:
        'Makes the request safe to retry: the same key with the same request within 24 hours replays the first answer (status, body, Location); with another request it is 409. Keys are scoped to your organization and the environment.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
    });
  const params = spec.params ? (jsonSchema(spec.params, 'input') as { properties?: Record<string, unknown> }) : undefined;
  for (const [name, schema] of Object.entries(params?.properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
  const querySchema = spec.queryByVersion?.[version] ?? spec.query;
  const query = querySchema
    ? (jsonSchema(querySchema, 'input') as { properties?: Record<string, unknown>; required?: string[] })
    : undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {}))
    parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema });

  const response = spec.response instanceof z.ZodType ? spec.response : spec.response[version]!;
  const headers: Record<string, unknown> = {
    ...REQUEST_ID,
    ...(spec.pathVersioned
      ? {}
      : { 'Api-Version': { description: 'The version that served the request', schema: { type: 'string', enum: [version] } } }),
  };
  if (spec.location) headers.Location = { required: true, description: 'The created resource', schema: { type: 'string' } };
  if (spec.idempotent) {
    headers[IDEMPOTENCY_HEADER] = { description: 'The Idempotency-Key the request sent, when it sent one', schema: { type: 'string' } };
    headers[REPLAYED_HEADER] = {
      description: '`true` when the answer is a replay of the first under its key',
      schema: { type: 'string', enum: ['true'] },
    };
  }
  const success = successStatus(spec);
  // A 204, or a 202 that only accepts (the sandbox simulations), has no body, so it documents no
  // content (its response schema is z.undefined()), nor does a 200 whose schema is z.undefined()
  // (the published suggestion uploads).
  const content =
    success === 204 || success === 202 || response instanceof z.ZodUndefined
      ? undefined
      : spec.media
        ? Object.fromEntries(spec.media.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]))
        : { 'application/json': { schema: jsonSchema(response, 'output') } };
  const description =
    STATUS_TITLES[success] ?? ({ 201: 'Created', 202: 'Accepted', 204: 'No Content' } as Record<number, string>)[success] ?? 'OK';
  const responses: Record<string, unknown> = { [String(success)]: { description, headers, ...(content ? { content } : {}) } };
  // The resource already existed (a Connect asked for again, a grant captured before).
  if (spec.answersExisting) responses['200'] = { description: 'OK: it already existed', headers, ...(content ? { content } : {}) };
  for (const status of errorStatuses(spec)) responses[String(status)] = { $ref: `#/components/responses/${responseName(status)}` };

  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: describe(spec),
    tags: [spec.tag],
    security: security(spec),
    parameters,
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(spec.bodyByVersion?.[version] ?? spec.body, 'input') } },
          },
        }
      : {}),
    responses,
    'x-credentials': acceptedCredentials(spec)
      .map((k) => CREDENTIAL_WORDS[k])
      .join(' or '),
    'x-required-scope': REQUIRED_SCOPE[spec.access],
  };
}

/** GET /openapi.json itself: public, per Api-Version. */
function documentOperation(version: ApiVersion): Record<string, unknown> {
  return {
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    description:
      'The OpenAPI 3.1 document of the version named by Api-Version, generated from the route definitions. No credential needed.',
    tags: ['OpenAPI'],
    security: [],
    parameters: [{ name: 'Api-Version', in: 'header', required: false, schema: { type: 'string', enum: [version] } }],
    responses: {
      '200': {
        description: 'OK',
        headers: { ...REQUEST_ID, 'Api-Version': { schema: { type: 'string', enum: [version] } } },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['openapi', 'info', 'paths'],
              properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
            },
          },
        },
      },
      '400': { $ref: '#/components/responses/BadRequest' },
      '500': { $ref: '#/components/responses/InternalServerError' },
    },
  };
}

/**
 * The gateway's own OpenAPI 3.1 document, generated from the route specs (the same zod
 * schemas that validate requests), for one API version of the API host at `serverUrl`.
 */
export function buildOpenApiDocument(specs: readonly RouteSpec[], version: ApiVersion, serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const statuses = new Set<number>([400, 500]);
  for (const spec of specs.filter((s) => s.versions.includes(version))) {
    const path = spec.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] = { ...paths[path], [spec.method]: operation(spec, version) };
    for (const status of errorStatuses(spec)) statuses.add(status);
  }
  paths['/openapi.json'] = { get: documentOperation(version) };
  const responses = Object.fromEntries(
    [...statuses]
      .sort((a, b) => a - b)
      .map((status) => [
        responseName(status),
        {
          description: STATUS_TITLES[status] ?? 'Error',
          headers: { ...REQUEST_ID, ...PROBLEM_HEADERS[status] },
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Almoner API',
      version,
      description: [
        `API version ${version}: send \`Api-Version: ${version}\` (the default is the newest version); the FDX operations under /fdx/v6 are versioned by their path instead.`,
        'Every call sends `Authorization: Bearer <credential>`: an OAuth access token (scopes per operation below) or, where an operation accepts one, an API key (`alm_live_…` in production, `alm_test_…` in the sandbox).',
        `Errors are RFC 9457 problem documents with a stable \`code\`, one of ${ERROR_CODE_NAMES.join(', ')}; on the FDX operations \`code\` is the FDX error code instead.`,
      ].join('\n\n'),
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: {
        accessToken: {
          type: 'openIdConnect',
          openIdConnectUrl: `${serverUrl}/.well-known/openid-configuration`,
          description: 'An OAuth 2.0 access token from the authorization code flow, sent as `Authorization: Bearer <token>`.',
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'alm_live_… or alm_test_…',
          description: "An API key of the caller's organization, sent as `Authorization: Bearer <key>`.",
        },
        clientToken: {
          type: 'oauth2',
          description:
            "A bank-data (fapi2) client's own token from grant_type=client_credentials (private_key_jwt), DPoP-bound: sent as `Authorization: DPoP <token>` with a `DPoP` proof.",
          flows: { clientCredentials: { tokenUrl: `${serverUrl}/auth/oauth/token`, scopes: {} } },
        },
      },
      responses,
      schemas: {
        Problem: {
          type: 'object',
          description: 'An RFC 9457 problem document.',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            error: { type: 'string', description: 'insufficient_scope, on a 403 for a missing scope' },
            code: {
              description: 'The stable error code (one of the error vocabulary); on FDX operations, the FDX error code instead',
              anyOf: [{ type: 'string', enum: ERROR_CODE_NAMES }, { type: 'integer' }],
            },
            message: { type: 'string', description: "FDX's short message for the code (FDX operations only)" },
          },
        },
      },
    },
  };
}

import { z } from 'zod';
import type { RouteSpec } from './route-spec.js';
import { STATUS_TITLES } from '../http/problem.js';
import type { ApiVersion } from './versions.js';

const REQUIRED_SCOPE: Record<RouteSpec['access'], string> = {
  read: 'read_only or read_write',
  write: 'read_write',
  fdx: 'read_only and exactly one of read:bank_accounts, sync:connected_accounts',
};

/**
 * The gateway's own OpenAPI 3.1 document, generated from the route specs (the same zod
 * schemas that validate requests), for one API version.
 */
export function buildOpenApiDocument(specs: readonly RouteSpec[], version: ApiVersion, serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs.filter((s) => s.versions.includes(version))) {
    const path = spec.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    const params = spec.params ? (z.toJSONSchema(spec.params, { io: 'input' }) as { properties?: Record<string, unknown> }) : undefined;
    for (const [name, schema] of Object.entries(params?.properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
    const querySchema = spec.queryByVersion?.[version] ?? spec.query;
    const query = querySchema ? (z.toJSONSchema(querySchema, { io: 'input' }) as { properties?: Record<string, unknown>; required?: string[] }) : undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema });
    const response = spec.response instanceof z.ZodType ? spec.response : spec.response[version]!;
    const headers = spec.pathVersioned ? { 'X-Request-Id': { schema: { type: 'string' } } } : { 'X-Request-Id': { schema: { type: 'string' } }, 'Api-Version': { schema: { type: 'string' } } };
    const content = spec.media
      ? Object.fromEntries(spec.media.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]))
      : { 'application/json': { schema: z.toJSONSchema(response) } };
    const responses: Record<string, unknown> = { '200': { description: 'OK', headers, content } };
    for (const status of spec.errors) {
      responses[String(status)] = { description: STATUS_TITLES[status] ?? 'Error', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    }
    paths[path] = {
      ...paths[path],
      [spec.method]: {
        operationId: spec.operationId,
        summary: spec.summary,
        tags: [spec.tag],
        security: [{ bearerAuth: [] }],
        parameters: spec.pathVersioned ? parameters : [{ name: 'Api-Version', in: 'header', required: false, schema: { type: 'string', enum: [version] } }, ...parameters],
        responses,
        'x-credentials': spec.credentials === 'access_token' ? 'OAuth access token' : 'OAuth access token or API key',
        'x-required-scope': REQUIRED_SCOPE[spec.access],
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Almoner API', version },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An OAuth 2.0 access token or an API key (alm_live_…, alm_test_…)' } },
      schemas: {
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail'],
          properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } },
        },
      },
    },
  };
}

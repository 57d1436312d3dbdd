import { createApiKey } from '../../src/api-keys/service.js';
import { seedNonprofitData } from '../../src/demo/nonprofit-data.js';
import type { Db } from '../../src/db/database.js';
import type { Env } from './flow.js';
import { endpoints, obtainTokens } from './flow.js';
import type { OAuthTestServer, Staff } from './oauth-server.js';
import { checkGatewayResponse } from './published-openapi.js';
import { documentVersion, servedDocument } from './served-openapi.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface ApiRequestOptions {
  bearer?: string;
  headers?: Record<string, string>;
  /** A JSON request body (sent with content-type application/json). */
  json?: unknown;
  /** A request body sent as it is, with content-type application/json (for bodies JSON.stringify cannot produce). */
  rawJson?: string;
}

/**
 * One call to an API host. Every response is checked against the published operation that
 * serves it and against the host's own /openapi.json for the same Api-Version
 * (checkGatewayResponse) before it is returned, so a test cannot receive a response the
 * published documents (or published-additions.ts) or our served document do not allow.
 */
export async function apiRequest(
  server: OAuthTestServer,
  environment: Env,
  method: string,
  path: string,
  options: ApiRequestOptions = {},
): Promise<ApiResponse> {
  const body = options.rawJson ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  const headers: Record<string, string> = {
    ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...options.headers,
  };
  const api = endpoints(server, environment).api;
  const served = await servedDocument(api, documentVersion(path, headers), headers);
  const response = await fetch(`${api}${path}`, { method, headers, body });
  const text = await response.text();
  checkGatewayResponse(
    { method, path, requestHeaders: headers, status: response.status, contentType: response.headers.get('content-type'), text },
    served,
  );
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export function apiGet(
  server: OAuthTestServer,
  environment: Env,
  path: string,
  options: Omit<ApiRequestOptions, 'json' | 'rawJson'> = {},
): Promise<ApiResponse> {
  return apiRequest(server, environment, 'GET', path, options);
}

export async function apiKeyFor(db: Db, staff: Staff, environment: Env): Promise<string> {
  return (await createApiKey(db, { org: staff.ein, environment })).key;
}

export async function seedData(
  db: Db,
  staff: Staff,
  environment: Env,
  counts: { donations?: number; connects?: number; grantsPerConnect?: number } = {},
) {
  return db.transaction().execute((trx) => seedNonprofitData(trx, { organizationId: staff.orgId, environment, ...counts }));
}

/** An access token from the full code flow for one of the staff. */
export async function accessToken(
  server: OAuthTestServer,
  client: { client_id: string; client_secret: string },
  options: {
    environment: Env;
    redirectUri: string;
    scope: string;
    login: { email: string; password: string };
    /** Headers of the token request: X-Forwarded-For, for a client that gets its tokens from inside its IP allow-list through a trusted proxy. */
    tokenHeaders?: Record<string, string>;
  },
) {
  const { tokens } = await obtainTokens(server, { ...options, client, clientId: client.client_id });
  if (tokens.status !== 200) throw new Error(`token exchange failed: ${tokens.status} ${JSON.stringify(tokens.body)}`);
  return tokens.body.access_token as string;
}

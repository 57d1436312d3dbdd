import { FUND_PROVIDERS } from '../auth/require-caller-kind.js';
import { z } from 'zod';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { donorAccountOf } from '../../daf/donor-accounts-service.js';
import { metadataSchema, pageParams } from './list-params.js';
import { dafScope } from '../../daf/scope.js';
import {
  createToken,
  MAX_TOKEN_TTL_SECONDS,
  MIN_TOKEN_TTL_SECONDS,
  revokeToken,
  tokenOf,
  tokensPage,
  verifyCode,
} from '../../daf/tokens-service.js';
import { authorizationTokenView, donorAccountView } from '../../daf/views.js';

const Token = z.object({
  id: z.string(),
  donor_account_id: z.string(),
  status: z.enum(['pending', 'verified', 'revoked', 'expired']),
  code: z.string().optional().describe('Returned only by create'),
  created_at: z.string(),
  expires_at: z.string(),
  verified_at: z.string().optional(),
  revoked_at: z.string().optional(),
  metadata: z.record(z.string(), z.string()),
});
const base = {
  tag: 'Authorization Tokens',
  versions: ['2026-04-01'] as const,
  area: 'daf',
  credentials: 'any' as const,
  callers: FUND_PROVIDERS,
};
const Id = z.object({ id: z.string().min(1).max(100) });

export const tokenRoutes = [
  defineRoute({
    ...base,
    operationId: 'create-authorization-token',
    method: 'post',
    path: '/v1/donor_accounts/:id/authorization_tokens',
    summary: 'Create a single-use authorization token; its code is returned once',
    access: 'write',
    params: Id,
    body: z
      .object({
        expires_in: z.number().int().min(MIN_TOKEN_TTL_SECONDS).max(MAX_TOKEN_TTL_SECONDS).optional(),
        metadata: metadataSchema.optional(),
      })
      .strict(),
    status: 201,
    idempotent: true,
    location: (result) => `/v1/authorization_tokens/${(result as { id: string }).id}`,
    response: Token,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, body, services }) {
      const input = body as { expires_in?: number; metadata?: Record<string, string> };
      const { row, code } = await createToken(db, services.keys, dafScope(caller), params.id, {
        expiresIn: input.expires_in,
        metadata: input.metadata,
      });
      return authorizationTokenView(row, code);
    },
  }),
  defineRoute({
    ...base,
    operationId: 'list-authorization-tokens',
    method: 'get',
    path: '/v1/donor_accounts/:id/authorization_tokens',
    summary: "List a donor account's authorization tokens (never their codes)",
    access: 'read',
    params: Id,
    query: z.object({ ...pageParams, status: z.enum(['pending', 'verified', 'revoked', 'expired']).optional() }).strict(),
    response: z.object({ results: z.array(Token), next_page_token: z.string().optional() }),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query }) {
      const scope = dafScope(caller);
      if (!(await donorAccountOf(db, scope, params.id))) throw resourceNotFound('The donor account');
      const rows = await tokensPage(db, scope, params.id, query.status, decodeCursor(query.page_token, 'page_token'), query.page_limit);
      return listPage(rows, query.page_limit, (row) => authorizationTokenView(row), 'next_page_token');
    },
  }),
  defineRoute({
    ...base,
    operationId: 'get-authorization-token',
    method: 'get',
    path: '/v1/authorization_tokens/:id',
    summary: 'Get an authorization token (never its code)',
    access: 'read',
    params: Id,
    response: Token,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await tokenOf(db, dafScope(caller), params.id);
      if (!row) throw resourceNotFound('The authorization token');
      return authorizationTokenView(row);
    },
  }),
  defineRoute({
    ...base,
    operationId: 'revoke-authorization-token',
    method: 'post',
    path: '/v1/authorization_tokens/:id/revoke',
    summary: 'Revoke a pending authorization token (412 once verified or expired)',
    access: 'write',
    params: Id,
    response: Token,
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, params }) {
      return authorizationTokenView(await revokeToken(db, dafScope(caller), params.id));
    },
  }),
  defineRoute({
    ...base,
    operationId: 'verify-authorization-token',
    method: 'post',
    path: '/v1/authorization_tokens/verify',
    summary: "Verify a donor's code (donor-initiated flow): approves the donor account",
    access: 'write',
    body: z.object({ code: z.string().min(1).max(64), external_id: z.string().trim().max(255).optional() }).strict(),
    response: z.object({}).passthrough().describe('The donor account'),
    errors: [400, 401, 403, 404, 409, 429],
    async handler({ db, caller, body, services }) {
      const input = body as { code: string; external_id?: string };
      return donorAccountView(await verifyCode(db, services.keys, dafScope(caller), input.code, input.external_id));
    },
  }),
];

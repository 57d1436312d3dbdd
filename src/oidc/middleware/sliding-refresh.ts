import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { hashId, setModelExpiry } from '../../db/provider-store.js';
import { isFapi2Client } from '../client-metadata.js';
import { refreshTokenTtl } from '../configuration.js';
import { requestEntities } from '../provider-internals.js';
import type { AnswerStep } from './steps.js';

/**
 * Token endpoint, after the provider and its unit of work: a fapi2 client keeps one refresh token (not rotated,
 * FAPI 2.0 §5.3.2.1), so each use moves its expiry forward as a rotation would have: 31 days
 * from now, never past 365 days from the first issue, nor past the end of its FDX consent
 * (refreshTokenTtl; docs/bank-data.md, "Profiles").
 */
export function slidingRefresh(db: Db, environment: Environment): AnswerStep {
  return async (rawCtx) => {
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (!ctx.oidc || ctx.status !== 200 || ctx.oidc.params?.grant_type !== 'refresh_token' || !isFapi2Client(ctx.oidc.client)) return;
    const token = requestEntities(ctx).RefreshToken;
    const value = ctx.oidc.params.refresh_token;
    if (!token || typeof value !== 'string') return;
    await setModelExpiry(db, environment, 'RefreshToken', hashId(value), Math.floor(Date.now() / 1000) + refreshTokenTtl(ctx, token));
  };
}

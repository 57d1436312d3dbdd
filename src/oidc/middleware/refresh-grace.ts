import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { findConsumedAt, hashId } from '../../db/provider-store.js';
import { findSuccessor, storeSuccessor } from '../refresh-successors-repository.js';
import { API_ROUTES } from '../routes.js';
import { single, takeFormBody } from './raw-form.js';
import { oidcState } from '../request-scope.js';

/**
 * refresh_reuse_grace_seconds: a duplicate presentation of a refresh token within the
 * window after its first use (a client retrying, two tabs racing) gets the same new pair
 * instead of revoking the authorization. The pair is stored encrypted under a key derived
 * from the presented refresh token and bound to the client it was issued to, so the table
 * alone reveals nothing.
 *
 * A duplicate is answered only after the provider has handled it in full: client
 * authentication (HTTP Basic, the secret check and its failure limits), the check that the
 * token was issued to that client, then the consume that loses to the first use
 * (the unit of work records that: middleware/unit-of-work.ts). A refusal before that point (no or wrong credentials, another
 * client) stays the refusal it is, and changes nothing: holding the token without the
 * client's secret neither refreshes nor revokes.
 */
const WAIT_MS = 3_000;

function keyFor(refreshToken: string, environment: Environment): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', refreshToken, environment, 'almoner refresh successor', 32));
}

/** AES-256-GCM; the client id is additional data, so the pair opens only for that client. */
function seal(plaintext: string, key: Buffer, clientId: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(clientId, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function open(sealed: string, key: Buffer, clientId: string): string | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(clientId, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Whether a refresh token was consumed within the grace window (the adapter asks this too). */
export function withinGrace(consumedAt: Date | null | undefined, graceSeconds: number): boolean {
  return graceSeconds > 0 && consumedAt instanceof Date && Date.now() - consumedAt.getTime() <= graceSeconds * 1000;
}

export function refreshGrace(db: Db, environment: Environment, graceSeconds: number): Middleware {
  const consumedAt = (id: string) => findConsumedAt(db, environment, 'RefreshToken', id);

  const successor = async (id: string, key: Buffer, clientId: string): Promise<Record<string, unknown> | undefined> => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const row = await findSuccessor(db, environment, id);
      if (row && row.expires_at.getTime() > Date.now()) {
        const text = open(row.ciphertext, key, clientId);
        return text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      }
      if (Date.now() > deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return async (rawCtx, next) => {
    if (graceSeconds <= 0 || rawCtx.path !== API_ROUTES.token || rawCtx.method !== 'POST') return next();
    const body = await takeFormBody(rawCtx);
    const refreshToken = body && single(body.grant_type) === 'refresh_token' ? single(body.refresh_token) : undefined;
    if (!refreshToken || refreshToken.length > 256) return next();
    const id = hashId(refreshToken);
    const key = keyFor(refreshToken, environment);

    await next();
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    const clientId = ctx.oidc?.client?.clientId;
    if (ctx.status === 200 && ctx.body && typeof ctx.body === 'object' && clientId) {
      await storeSuccessor(db, { environment, id, ciphertext: seal(JSON.stringify(ctx.body), key, clientId), expires_at: new Date(Date.now() + graceSeconds * 1000) });
      return;
    }
    // Only a duplicate from the authenticated owner that lost the consume race is answered.
    const owner = oidcState(rawCtx).lostRefreshRaceClient;
    if (!owner || owner !== clientId || !withinGrace(await consumedAt(id), graceSeconds)) return;
    const pair = await successor(id, key, owner);
    if (!pair) return;
    rawCtx.status = 200;
    rawCtx.remove('WWW-Authenticate');
    rawCtx.set('Cache-Control', 'no-store');
    rawCtx.body = pair;
  };
}

import querystring from 'node:querystring';
import type { ParameterizedContext } from 'koa';
import { errors } from 'oidc-provider';

const LIMIT = 56 * 1024;

/**
 * Reads a form body once, before the provider does, and hands it over as req.body (the
 * provider's documented fallback), so pre-middleware can look at token parameters.
 */
export async function takeFormBody(ctx: ParameterizedContext): Promise<Record<string, string | string[] | undefined> | undefined> {
  if (!ctx.is('application/x-www-form-urlencoded')) return undefined;
  const req = ctx.req as typeof ctx.req & { body?: string };
  if (typeof req.body === 'string') return querystring.parse(req.body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > LIMIT) throw new errors.InvalidRequest('request body too large');
    chunks.push(chunk as Buffer);
  }
  req.body = Buffer.concat(chunks).toString('utf8');
  return querystring.parse(req.body);
}

export function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

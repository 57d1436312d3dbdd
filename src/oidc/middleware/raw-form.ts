import querystring from 'node:querystring';
import type { Middleware, ParameterizedContext } from 'koa';
import { errors } from 'oidc-provider';
import { replayRequestBody } from '../provider-internals.js';
import { oidcState, type FormParams } from '../request-scope.js';

const LIMIT = 56 * 1024;

/**
 * Reads a form body once, before the provider does, so pre-middleware can look at its
 * parameters. The provider then reads the same bytes from the request as if nobody had
 * (see handOver); a later call returns what the first one read (kept in ctx.state.oidc.form).
 */
export async function takeFormBody(ctx: ParameterizedContext): Promise<FormParams | undefined> {
  if (!ctx.is('application/x-www-form-urlencoded')) return undefined;
  const seen = ctx.state.oidc?.form;
  if (seen !== undefined) return seen.params;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > LIMIT) throw new errors.InvalidRequest('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  handOver(ctx, text);
  return ctx.state.oidc!.form!.params;
}

/** A step of an endpoint's chain: the form, read once into ctx.state.oidc.form for the steps after it. */
export function readForm(): Middleware {
  return async (ctx, next) => {
    await takeFormBody(ctx);
    await next();
  };
}

/** The form the request's chain read (readForm), as the provider will read it; undefined for another body. */
export function formOf(ctx: ParameterizedContext): FormParams | undefined {
  return ctx.state.oidc?.form?.params;
}

/** Adds a parameter to the form the provider will read (after takeFormBody). */
export function appendFormParameter(ctx: ParameterizedContext, name: string, value: string): void {
  const text = ctx.state.oidc?.form?.text;
  if (text === undefined) throw new Error('appendFormParameter before takeFormBody');
  handOver(ctx, `${text}${text ? '&' : ''}${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
}

/** Replaces the form the provider will read (after takeFormBody). */
export function replaceFormBody(ctx: ParameterizedContext, form: FormParams): void {
  if (ctx.state.oidc?.form === undefined) throw new Error('replaceFormBody before takeFormBody');
  handOver(ctx, querystring.stringify(form));
}

/**
 * Keeps the form as read and hands the provider a request whose stream yields it afresh
 * (provider-internals.ts, replayRequestBody: the library reads the body from the stream itself).
 */
function handOver(ctx: ParameterizedContext, text: string): void {
  const state = oidcState(ctx);
  const original = state.form?.original ?? ctx.req;
  state.form = { params: querystring.parse(text), text, original };
  replayRequestBody(ctx, original, text);
}

export function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

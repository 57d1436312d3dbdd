import type { Context } from 'koa';

/** An answer kept to be given again (an idempotent request's, docs/api.md "Idempotency"). */
export interface StoredAnswer {
  status: number;
  /** The JSON body; a problem document when status ≥ 400. */
  body: unknown;
  location: string | null;
}

/** Writes a stored answer as it was first given: its status, Location and body, a refusal as problem+json. */
export function sendStoredAnswer(ctx: Pick<Context, 'status' | 'set' | 'type' | 'body'>, answer: StoredAnswer): void {
  ctx.status = answer.status;
  if (answer.location) ctx.set('Location', answer.location);
  if (answer.status === 204) return;
  if (answer.status >= 400) ctx.type = 'application/problem+json';
  ctx.body = answer.body;
}

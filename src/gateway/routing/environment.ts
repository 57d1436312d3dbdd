import type { ParameterizedContext } from 'koa';
import type { Environment } from '../../db/schema.js';

/** The environment of the API host the request addressed (set by the host dispatcher). */
export function environmentOf(ctx: ParameterizedContext): Environment {
  return ctx.state.host === 'sandbox_api' ? 'sandbox' : 'production';
}

import Koa from 'koa';
import { errorHandler } from '../../src/http/error-handler.js';

/** A Koa app whose only middleware, behind the error handler, throws `error`: for supertest. */
export function appThrowing(error: unknown) {
  const app = new Koa();
  app.silent = true;
  app.use(errorHandler());
  app.use(() => {
    throw error;
  });
  return app.callback();
}

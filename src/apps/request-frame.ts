import type { Middleware } from 'koa';
import { writeAccessLine } from '../http/access-log.js';
import { resolveClientAddress, type AddressSet } from '../http/client-address.js';
import { answerError, throwIfUnanswered } from '../http/error-handler.js';
import { beginRequestId } from '../http/request-id.js';
import { setSecurityHeaders } from '../http/security-headers.js';
import type { Logger } from '../logging/logger.js';
import { beginObservation, endObservation } from '../metrics/http-metrics.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * What the main app does around every request, as one middleware: exactly the middlewares
 * requestId > clientAddress > httpMetrics > accessLog > errorHandler > securityHeaders, nested
 * in that order, but one async frame per request instead of six (each was a promise and a
 * dispatch of Koa's compose on every request). Each concern's work stays
 * in its own module; the nested `try`s below keep each one's exception path: the error handler
 * answers what the app threw, then the access log and the metrics see its final status, and
 * both run even when something still escapes.
 */
export function requestFrame(logger: Logger, trustedProxies: AddressSet, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    beginRequestId(ctx, logger, trustedProxies);
    resolveClientAddress(ctx, trustedProxies);
    const observed = beginObservation(metrics, ctx);
    try {
      const logged = process.hrtime.bigint();
      try {
        try {
          setSecurityHeaders(ctx);
          await next();
          throwIfUnanswered(ctx);
        } catch (error) {
          answerError(ctx, error);
        }
      } finally {
        writeAccessLine(ctx, logged, logger);
      }
    } finally {
      // Requests the host dispatcher did not claim are labelled host="none".
      endObservation(metrics, ctx, observed, 'none');
    }
  };
}

import type { RouteSpec } from './routing/route-spec.js';

/**
 * Every status an operation can answer, from its spec: the success status, what the
 * router's stack gives every operation (router.ts, auth/, http/json-body.ts,
 * http/error-handler.ts), and what its handler raises (`errors`). /openapi.json lists exactly
 * these, and the test helpers fail any live response whose status is not among them.
 */
export function successStatus(spec: Pick<RouteSpec, 'status'>): number {
  return spec.status ?? 200;
}

export function errorStatuses(spec: RouteSpec): number[] {
  const statuses = new Set<number>(spec.errors);
  // An unknown Api-Version (versioned paths), or a parameter or body that fails its schema.
  if (!spec.pathVersioned || spec.params || spec.query || spec.queryByVersion || spec.body) statuses.add(400);
  // bearerToken and validateCredential: no, a malformed or an invalid credential.
  statuses.add(401);
  // requireScope (and an IP allow-list or requireCallerKind where they apply).
  statuses.add(403);
  // An Idempotency-Key used before with another request (routing/idempotent.ts).
  if (spec.idempotent) statuses.add(409);
  if (spec.body) {
    statuses.add(413); // readJson: over 64 KiB
    statuses.add(415); // readJson: not application/json
  }
  // The error middleware: anything unexpected, and a database outage (with Retry-After).
  statuses.add(500);
  statuses.add(503);
  return [...statuses].sort((a, b) => a - b);
}

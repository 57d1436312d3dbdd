import type { IncomingMessage } from 'node:http';

/**
 * How many times the request carried a header (by name, any case). Node keeps only the first
 * `Authorization` of several and drops the rest unseen, so which credential a request "has"
 * would depend on the order a proxy wrote them: such a request is refused instead
 * (docs/security.md, "Two credentials in one request").
 */
export function headerCount(req: IncomingMessage, name: string): number {
  const lower = name.toLowerCase();
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === lower) count += 1;
  return count;
}

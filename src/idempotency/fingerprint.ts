import { createHash } from 'node:crypto';

/**
 * JSON with every object's members in code-unit order, so two requests that differ only in the
 * order of their members (or in whitespace) have one fingerprint.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * SHA-256 (hex) of what a request asks: the API version it is answered in (a replay must have
 * that version's shape), its path parameters, its query and its JSON body.
 */
export function requestFingerprint(request: { version: string; params: unknown; query: unknown; body: unknown }): string {
  return createHash('sha256')
    .update(
      canonicalJson({ version: request.version, params: request.params ?? {}, query: request.query ?? {}, body: request.body ?? null }),
    )
    .digest('hex');
}

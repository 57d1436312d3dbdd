/**
 * Node 20 reached its end of life on 2026-04-30: it still runs Almoner (package.json
 * engines), but gets no security fixes, so the server says so once at start.
 */
export function nodeSupportNotice(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major !== 20) return undefined;
  return `Node.js ${version} is past its end of life (2026-04-30) and gets no security fixes: run Almoner on Node 22 or 24`;
}

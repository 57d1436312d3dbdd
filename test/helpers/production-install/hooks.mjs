// Module resolution hooks (register.mjs): a package that package-lock.json marks "dev" (one that
// `npm ci --omit=dev` leaves out) cannot be found, with the error Node gives for a package that
// is not installed. Covers import, import() and import.meta.resolve (require() of CommonJS
// code is not hooked on Node 20; src/ is ES modules).
import fs from 'node:fs';

/** @type {{ packages: Record<string, { dev?: boolean }> }} */
const lock = JSON.parse(fs.readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8'));
/** The packages a production install leaves out: those only the dev dependencies bring. */
export const omittedPackages = new Set(
  Object.entries(lock.packages)
    .filter(([key, entry]) => entry.dev === true && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key))
    .map(([key]) => key.slice('node_modules/'.length)),
);

/** The package a bare specifier names ('@scope/name' or 'name'), else undefined. */
export function packageOf(/** @type {string} */ specifier) {
  if (/^(\.|\/|[a-z]+:)/.test(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * @param {string} specifier
 * @param {{ parentURL?: string }} context
 * @param {(specifier: string, context: object) => Promise<unknown>} next
 */
export async function resolve(specifier, context, next) {
  const name = packageOf(specifier);
  if (name !== undefined && omittedPackages.has(name)) {
    const error = /** @type {NodeJS.ErrnoException} */ (
      new Error(`Cannot find package '${name}' imported from ${context.parentURL ?? 'the entry point'} (a production install omits it)`)
    );
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}

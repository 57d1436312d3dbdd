import nunjucks from 'nunjucks';
import { isTestRun } from '../config/load.js';
import { VIEWS_DIR } from '../config/paths.js';
import type { ViewName, ViewModels } from './models.js';

/**
 * Server-rendered pages; autoescaping on, templates cached after first use. Strict in the dev
 * profile and in tests: a value a template outputs (`{{ x }}`) that the page did not pass, or
 * passed as null, is an error there, so a misspelt name fails instead of rendering empty. In
 * production the same page still renders, the missing value as nothing. Conditions and loops
 * (`{% if x %}`, `{% for a in x %}`) read a missing value as false or empty in both.
 */
export function createViewEnvironment(options: { strict: boolean }): nunjucks.Environment {
  return new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR, { noCache: false }), {
    autoescape: true,
    throwOnUndefined: options.strict,
  });
}

const testRun = isTestRun();
const environments = { strict: createViewEnvironment({ strict: true }), lenient: createViewEnvironment({ strict: false }) };
let strict = testRun;

/** Set once at start from the profile: dev renders strictly, production leniently (tests always strictly). */
export function useViewProfile(profile: 'dev' | 'production'): void {
  strict = testRun || profile === 'dev';
}

export function renderView<V extends ViewName>(name: V, context: ViewModels[V]): string {
  return (strict ? environments.strict : environments.lenient).render(name, context as object);
}

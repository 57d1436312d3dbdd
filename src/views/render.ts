import nunjucks from 'nunjucks';
import { VIEWS_DIR } from '../config/paths.js';

/** Server-rendered pages; autoescaping on, templates cached after first use. */
const environment = new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR, { noCache: false }), { autoescape: true, throwOnUndefined: false });

export function renderView(name: string, context: Record<string, unknown>): string {
  return environment.render(name, context);
}

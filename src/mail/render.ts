import path from 'node:path';
import nunjucks from 'nunjucks';
import { VIEWS_DIR } from '../config/paths.js';

/**
 * Every e-mail's words come from a plain-text template in views/mail/<name>.txt.njk whose first
 * line is `Subject: …` and whose body follows a blank line. No HTML mail: nothing to escape, and
 * links read the same in every client. A missing value is an error, never an empty string.
 */
const environment = new nunjucks.Environment(new nunjucks.FileSystemLoader(path.join(VIEWS_DIR, 'mail'), { noCache: false }), {
  autoescape: false,
  throwOnUndefined: true,
  trimBlocks: true,
  lstripBlocks: true,
});

export interface RenderedMail {
  subject: string;
  text: string;
}

export function renderMail(name: string, data: Record<string, unknown>): RenderedMail {
  const rendered = environment.render(`${name}.txt.njk`, data);
  const match = /^Subject: (.+)\r?\n\r?\n([\s\S]*)$/.exec(rendered);
  if (!match) throw new Error(`views/mail/${name}.txt.njk must start with "Subject: …" and a blank line`);
  return { subject: match[1]!.trim(), text: `${match[2]!.trimEnd()}\n` };
}

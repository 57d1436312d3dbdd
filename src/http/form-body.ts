import type { Context } from 'koa';
import { HttpProblem } from './problem.js';

const LIMIT = 16 * 1024;

/** Reads an application/x-www-form-urlencoded body (16 KiB at most) into a plain object of strings. */
export async function readForm(ctx: Context): Promise<Record<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new HttpProblem(415, 'Unsupported Media Type', 'Forms must be sent as application/x-www-form-urlencoded.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > LIMIT) throw new HttpProblem(413, 'Content Too Large', 'The form is too large.');
    chunks.push(chunk as Buffer);
  }
  const form: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
    if (!(key in form)) form[key] = value;
  }
  return form;
}

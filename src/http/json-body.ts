import type { Context } from 'koa';
import { HttpProblem } from './problem.js';

const LIMIT = 64 * 1024;

/** Reads a JSON request body (64 KiB at most). An empty body reads as {}. */
export async function readJson(ctx: Context): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > LIMIT) throw new HttpProblem(413, 'Content Too Large', 'The request body is larger than 64 KiB.');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  if (!ctx.is('application/json')) throw new HttpProblem(415, 'Unsupported Media Type', 'Send the request body as application/json.');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpProblem(400, 'Bad Request', 'The request body is not valid JSON.');
  }
}

import type { Context } from 'koa';
import { HttpProblem } from './problem.js';

const LIMIT = 64 * 1024;

const nulProblem = () =>
  new HttpProblem(
    400,
    'Bad Request',
    'The request body contains the character U+0000 (\\u0000), which this service does not accept anywhere in a JSON body.',
  );

/**
 * Refuses U+0000 in any key or string, at any depth. PostgreSQL can store it in neither text
 * nor jsonb, so it is refused here, once, before any handler sees the body. In valid JSON it
 * can only be written as the escape \u0000 (a raw control character is a syntax error), so
 * bodies without that escape skip the walk.
 */
function refuseNul(text: string): ((key: string, value: unknown) => unknown) | undefined {
  if (!text.includes('\\u0000')) return undefined;
  return (key, value) => {
    if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) throw nulProblem();
    return value;
  };
}

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
    return JSON.parse(text, refuseNul(text)) as unknown;
  } catch (error) {
    if (error instanceof HttpProblem) throw error;
    throw new HttpProblem(400, 'Bad Request', 'The request body is not valid JSON.');
  }
}

import { invalid } from '../errors/domain-error.js';

/** The request header naming an idempotency key (docs/api.md, "Idempotency"). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** 1–255 visible ASCII characters (0x21–0x7E), as the table's check holds too. */
const KEY = /^[!-~]{1,255}$/;

/**
 * The idempotency key a request sent, or undefined when it sent none. A key that is empty,
 * too long, not visible ASCII, or sent twice is a 400 naming the header.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw invalid(`The ${IDEMPOTENCY_HEADER} header must be sent once.`);
  if (!KEY.test(header))
    throw invalid(`The ${IDEMPOTENCY_HEADER} header must be 1 to 255 visible ASCII characters (no spaces or control characters).`);
  return header;
}

import { inspect } from 'node:util';
import { redactText } from './redaction.js';

/** What a logged error becomes: enough to find the fault, never the objects it carries. */
export interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  code?: string | number;
  cause?: SerializedError;
  errors?: SerializedError[];
}

const MAX_DEPTH = 3;

/**
 * The logger's `err` serializer. Only the type, message, stack, code and the cause/aggregate
 * chain are kept: other properties (a driver's query detail, an HTTP client's request) may
 * hold data that must not reach the log, and the message and stack lose any query string,
 * secret path or credential they name (redaction.ts). A connection refused on every address is
 * an AggregateError with an empty message, so the message then falls back to its errors'
 * messages or its code. A thrown non-Error value is described by its text.
 */
export function serializeError(value: unknown, depth = 0): SerializedError {
  if (!(value instanceof Error)) {
    const message =
      typeof (value as { message?: unknown })?.message === 'string'
        ? (value as { message: string }).message
        : inspect(value, { depth: 1, breakLength: Infinity });
    return {
      type: value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'Object') : typeof value,
      message: redactText(message),
    };
  }
  const code = (value as { code?: unknown }).code;
  const out: SerializedError = {
    type: value.name && value.name !== 'Error' ? value.name : value.constructor.name,
    message: redactText(value.message),
  };
  if (typeof value.stack === 'string') out.stack = redactText(value.stack);
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (depth < MAX_DEPTH) {
    if (value.cause !== undefined) out.cause = serializeError(value.cause, depth + 1);
    if (value instanceof AggregateError && Array.isArray(value.errors))
      out.errors = value.errors.slice(0, 5).map((inner: unknown) => withoutStack(serializeError(inner, depth + 1)));
  }
  if (!out.message)
    out.message =
      out.errors
        ?.map((inner) => inner.message)
        .filter(Boolean)
        .join('; ') || (out.code !== undefined ? String(out.code) : '(no message)');
  return out;
}

/** An aggregate's members share the aggregate's origin: their messages and codes say enough. */
function withoutStack(error: SerializedError): SerializedError {
  const { stack: _stack, ...rest } = error;
  return rest;
}

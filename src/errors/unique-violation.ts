import { conflict } from './domain-error.js';

/** PostgreSQL's SQLSTATE for unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * The one place a unique violation becomes a domain error: a violation of a constraint named in
 * `messages` is a `conflict` with that constraint's message; any other error (another
 * constraint included) is rethrown as it is.
 */
export function mapUniqueViolation(error: unknown, messages: Record<string, string>): never {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  if (code === UNIQUE_VIOLATION && constraint && Object.hasOwn(messages, constraint)) throw conflict(messages[constraint]!);
  throw error;
}

/** Whether `error` is a unique violation of `constraint`: for code that decides otherwise than with a conflict. */
export function isUniqueViolationOf(error: unknown, constraint: string): boolean {
  const found = (error ?? {}) as { code?: string; constraint?: string };
  return found.code === UNIQUE_VIOLATION && found.constraint === constraint;
}

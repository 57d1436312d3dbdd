/** Typed business errors with stable codes; the CLI and HTTP layers map them to their own shapes. */
export class DomainError extends Error {
  constructor(
    readonly code: 'invalid' | 'not_found' | 'conflict',
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (message: string) => new DomainError('invalid', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);

/** Maps unique-constraint violations (by constraint name) to "already exists" conflicts. */
export function mapUniqueViolation(error: unknown, messages: Record<string, string>): never {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  if (code === '23505' && constraint && messages[constraint]) throw conflict(messages[constraint]);
  throw error;
}

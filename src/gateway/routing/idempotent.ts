import { sendStoredAnswer } from '../../http/stored-answer.js';
import type { ParameterizedContext } from 'koa';
import type { Db } from '../../db/database.js';
import type { Trx } from '../../db/executor.js';
import { DomainError } from '../../errors/domain-error.js';
import { problemOf } from '../../http/problem.js';
import type { SecretBox } from '../../keys/secret-box.js';
import { requestFingerprint } from '../../idempotency/fingerprint.js';
import { IDEMPOTENCY_HEADER } from '../../idempotency/key.js';
import { runIdempotent, type Answer } from '../../idempotency/service.js';
import type { Caller } from './caller.js';

/** Set on a replayed answer, as Stripe does, so a client can tell a replay from a first run. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Which thrown errors are final answers, stored and replayed (docs/api.md, "Idempotency"): a
 * DomainError of 4xx raised by the operation itself (not found, conflict, invalid), as Stripe
 * stores them. Never a 429 or 503 or one carrying headers about the moment (Retry-After,
 * WWW-Authenticate), nor a 5xx: those roll back, the key with them, and a retry runs afresh.
 */
function finalAnswerOf(error: unknown): Answer | undefined {
  if (!(error instanceof DomainError)) return undefined;
  const problem = problemOf(error);
  if (problem.status < 400 || problem.status >= 500 || problem.status === 429 || Object.keys(problem.headers).length > 0) return undefined;
  return { status: problem.status, body: problem.toJSON(), location: null };
}

export interface IdempotentCall {
  ctx: ParameterizedContext;
  db: Db;
  box: SecretBox;
  caller: Caller;
  key: string;
  /** The route's method and path pattern. */
  operation: string;
  request: { version: string; params: unknown; query: unknown; body: unknown };
  /** The operation's work with the key's transaction as its database; resolves to the answer. */
  run: (db: Db) => Promise<Answer>;
}

/**
 * Runs an operation under the caller's idempotency key, or replays the answer stored under it,
 * and writes the answer to the response. The key's scope is the organization the credential
 * acts for, in the credential's environment.
 */
export async function answerIdempotently(call: IdempotentCall): Promise<void> {
  const { answer, replayed } = await runIdempotent(
    call.db,
    call.box,
    {
      environment: call.caller.environment,
      organizationId: call.caller.organizationId,
      key: call.key,
      operation: call.operation,
      fingerprint: requestFingerprint(call.request),
    },
    { run: (trx: Trx) => call.run(trx), finalAnswerOf },
  );
  const { ctx } = call;
  ctx.set(IDEMPOTENCY_HEADER, call.key);
  if (replayed) ctx.set(REPLAYED_HEADER, 'true');
  sendStoredAnswer(ctx, answer);
}

import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import { conflict } from '../errors/domain-error.js';
import type { SecretBox } from '../keys/secret-box.js';
import { IDEMPOTENCY_HEADER } from './key.js';
import { claimAndLock, restartKey, storeAnswer, type KeyId } from './idempotency-keys-repository.js';

/**
 * Exactly once by the database (docs/api.md, "Idempotency"): the request's work runs inside the
 * transaction that holds its key's row locked, and its answer is stored in that transaction, so
 * the work and the answer commit together or not at all.
 */

/** What is stored and replayed: the status, the JSON body, the Location header. */
export interface Answer {
  status: number;
  body: unknown;
  location: string | null;
}

export interface IdempotentRequest extends KeyId {
  /** Method and route path: "POST /v1/donor_accounts". */
  operation: string;
  fingerprint: string;
}

export interface IdempotentRun {
  /** The request's work, given the key's transaction; resolves to the answer to store. */
  run: (trx: Trx) => Promise<Answer>;
  /**
   * The answer a thrown error is when that answer is final (stored and replayed), or undefined:
   * the error then rolls everything back, the key included, and the key is free for a retry.
   */
  finalAnswerOf: (error: unknown) => Answer | undefined;
}

/** Runs the request once under its key, or replays the answer stored under it; `replayed` says which. */
export function runIdempotent(
  db: Db,
  box: SecretBox,
  request: IdempotentRequest,
  { run, finalAnswerOf }: IdempotentRun,
): Promise<{ answer: Answer; replayed: boolean }> {
  return inTransaction(db, async (trx) => {
    const row = await claimAndLock(trx, request, request.operation, request.fingerprint);
    if (row.status !== null && row.body_sealed !== null && row.fresh) {
      if (row.operation !== request.operation || row.fingerprint !== request.fingerprint)
        throw conflict(
          `This ${IDEMPOTENCY_HEADER} was already used with another request (${row.operation}, another body or parameters) in the last 24 hours; send a new key for a new request.`,
        );
      return { answer: { status: row.status, body: JSON.parse(box.open(row.body_sealed)), location: row.location }, replayed: true };
    }
    // A key of ours, or one whose answer is past the replay window: this request runs afresh.
    if (row.status !== null || row.operation !== request.operation || row.fingerprint !== request.fingerprint)
      await restartKey(trx, request, request.operation, request.fingerprint);
    let answer: Answer;
    try {
      // A savepoint (inTransaction within a transaction): a final error undoes the work, not the key.
      answer = await inTransaction(trx, run);
    } catch (error) {
      const final = finalAnswerOf(error);
      if (!final) throw error;
      answer = final;
    }
    // The body as it goes out (JSON), so a replay is the same bytes' worth of JSON.
    const json = JSON.stringify(answer.body ?? null);
    await storeAnswer(trx, request, { status: answer.status, bodySealed: box.seal(json), location: answer.location });
    return { answer: { ...answer, body: JSON.parse(json) }, replayed: false };
  });
}

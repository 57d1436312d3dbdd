import { DomainError } from '../errors/domain-error.js';

/**
 * A posting would take a floored account below zero (docs/ledger.md, "What the database
 * guarantees"). `precondition`: the money may be there later; nothing was posted.
 */
export class InsufficientBalance extends DomainError {
  constructor(
    readonly accountId: string,
    purpose: string,
  ) {
    super('precondition', `insufficient ${purpose} balance in ledger account ${accountId}`);
    this.name = 'InsufficientBalance';
  }
}

/**
 * The transfer of this reference was posted before (docs/ledger.md, "Exactly once"): a caller
 * replaying a request treats it as done. `conflict`: nothing was posted this time.
 */
export class AlreadyPosted extends DomainError {
  constructor(
    readonly existingTransferId: string,
    message: string,
  ) {
    super('conflict', message);
    this.name = 'AlreadyPosted';
  }
}

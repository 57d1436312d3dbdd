import type { Db } from '../../db/database.js';
import {
  countStatements,
  countTransactions,
  findStatement,
  listStatements,
  listTransactions,
  statementBelongsTo,
  transactionBelongsTo,
  type StatementRow,
  type TransactionRow,
} from './activity-repository.js';
import type { ActivitySource } from './activity-list.js';

/** An account's monthly statements, for listAccountActivity. */
export const statementActivity: ActivitySource<StatementRow> = {
  belongsTo: statementBelongsTo,
  list: listStatements,
  count: countStatements,
};

/** An account's transactions, for listAccountActivity. */
export const transactionActivity: ActivitySource<TransactionRow> = {
  belongsTo: transactionBelongsTo,
  list: listTransactions,
  count: countTransactions,
};

/** One of an account's statements, or undefined. */
export function statementOf(db: Db, accountId: string, id: string): Promise<StatementRow | undefined> {
  return findStatement(db, accountId, id);
}

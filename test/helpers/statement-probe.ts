import { AsyncLocalStorage } from 'node:async_hooks';
import {
  PostgresQueryCompiler,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * The HTTP request a statement was issued for: startOAuthServer runs each request's handler
 * inside it. A statement the process runs on its own (a timer's poll of the signing keys or
 * of the webhook queue, sharing the same database handle) has none.
 */
export const requestScope = new AsyncLocalStorage<{ method: string; url: string }>();

/** One statement the server ran: its text, its parameters, and whether an HTTP request issued it. */
export interface ProbedStatement {
  text: string;
  parameters: readonly unknown[];
  inRequest: boolean;
}

/**
 * Sees every statement a Kysely instance runs (install with db.withPlugin(probe)); can hold one
 * back to let a rival act first, or refuse one as an unreachable database would.
 */
export class StatementProbe implements KyselyPlugin {
  private readonly pending = new Map<unknown, ProbedStatement>();
  private readonly compiler = new PostgresQueryCompiler();
  /** The texts of the statements run since the last reset, in completion order. */
  statements: string[] = [];
  /** The same statements with their parameters. */
  probed: ProbedStatement[] = [];
  /** The first statement whose text matches is not sent: it fails with this error instead. */
  refusal: { match: RegExp; error: () => Error } | undefined;
  /** Runs after the first statement whose text matches, before its result returns. */
  interceptor: { match: RegExp; run: () => Promise<void> } | undefined;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const compiled = this.compiler.compileQuery(args.node, args.queryId);
    const refusal = this.refusal;
    if (refusal && refusal.match.test(compiled.sql)) {
      this.refusal = undefined;
      throw refusal.error();
    }
    this.pending.set(args.queryId, {
      text: compiled.sql,
      parameters: compiled.parameters,
      inRequest: requestScope.getStore() !== undefined,
    });
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const statement = this.pending.get(args.queryId) ?? { text: '', parameters: [], inRequest: false };
    this.pending.delete(args.queryId);
    this.statements.push(statement.text);
    this.probed.push(statement);
    const interceptor = this.interceptor;
    if (interceptor && interceptor.match.test(statement.text)) {
      this.interceptor = undefined;
      await interceptor.run();
    }
    return args.result;
  }

  reset(): void {
    this.statements = [];
    this.probed = [];
  }

  /**
   * Statements an HTTP request issued that touched the provider's rows, our authorizations or
   * the audit trail (the sweeper's timer, which deletes expired provider rows on the same
   * database handle, is not a request's).
   */
  tokenStatements(): string[] {
    return this.probed.filter((s) => s.inRequest && /oidc_models|oauth_authorizations|audit_events/.test(s.text)).map((s) => s.text);
  }

  /** Reads of one provider model's rows (the adapter's find by id, or a read naming the model in its text). */
  modelReads(model: string): ProbedStatement[] {
    return this.probed.filter(
      (s) =>
        /^\s*select\b/i.test(s.text) &&
        /\boidc_models\b/.test(s.text) &&
        (s.parameters.includes(model) || new RegExp(`\\.model = '${model}'`).test(s.text)),
    );
  }
}

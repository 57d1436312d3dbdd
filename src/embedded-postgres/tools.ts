import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * Running PostgreSQL's own tools (initdb, pg_ctl) and reporting their failures.
 *
 * A failure message always says what the tool said: its stderr, or, when that is empty, its
 * stdout and how it ended (exit code, signal, or why it could not be started at all). An
 * empty reason ("initdb failed: ") leaves a user nothing to act on.
 */

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The OS user the tools run as: empty for the current user, the `postgres` user's ids as root. */
export interface RunAs {
  uid?: number;
  gid?: number;
}

interface ExecFailure {
  code?: number | string | null;
  signal?: NodeJS.Signals | null;
  killed?: boolean;
  stdout?: string;
  stderr?: string;
  message?: string;
}

/** The last lines of a tool's output, on one line (messages end up in one-line errors). */
function lastLines(text: string, count = 6): string {
  return text
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-count)
    .join(' | ');
}

/** One line saying how a tool run ended and what it printed; never empty. */
export function describeToolFailure(tool: string, error: unknown): string {
  const failure = (error ?? {}) as ExecFailure;
  let ending: string;
  if (typeof failure.code === 'string') {
    // Not started at all (EACCES, ENOENT…): Node's message names the call and the code.
    ending = `could not be run (${failure.message ?? failure.code})`;
    if (failure.code === 'EACCES') ending += '; the OS user running it cannot execute it or reach its directory';
  } else if (failure.killed && failure.signal) {
    ending = `was stopped by ${failure.signal} after its time limit`;
  } else if (failure.signal) {
    ending = `was killed by ${failure.signal}`;
  } else if (typeof failure.code === 'number') {
    ending = `failed (exit code ${failure.code})`;
  } else {
    ending = `failed (${failure.message ?? String(error)})`;
  }
  const stderr = lastLines(failure.stderr ?? '');
  if (stderr) return `${tool} ${ending}: ${stderr}`;
  const stdout = lastLines(failure.stdout ?? '');
  if (stdout) return `${tool} ${ending}, printing nothing on stderr; stdout: ${stdout}`;
  return `${tool} ${ending}, printing nothing`;
}

/**
 * Runs a PostgreSQL tool, as `runAs`. The working directory is `/`: a child of root would
 * otherwise inherit root's (say, a 0700 home), which the `postgres` user cannot use.
 * Throws a EmbeddedPostgresError whose message describes the failure (see describeToolFailure).
 * When `signal` aborts, the tool gets SIGTERM and the call rejects with the signal's reason
 * once the tool has exited, so the caller's clean-up runs after it, not beside it: an initdb
 * still running would make its directories again under a staging directory already removed.
 * (execFile's own `signal` option rejects at once, without waiting for the exit.)
 */
export function runTool(binary: string, args: readonly string[], runAs: RunAs, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => child.kill('SIGTERM');
    const child = execFile(
      binary,
      args,
      { ...runAs, cwd: '/', env: { ...process.env, LC_ALL: 'C' }, timeout: 120_000 },
      (error, stdout, stderr) => {
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) return reject(signal.reason);
        if (error)
          return reject(new EmbeddedPostgresError(describeToolFailure(path.basename(binary), Object.assign(error, { stdout, stderr }))));
        resolve();
      },
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether a process exists (EPERM: it does, as another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

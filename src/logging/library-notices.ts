import type { Logger } from 'pino';

/**
 * What libraries and Node print by themselves goes through the logger (docs/operations.md,
 * "HTTP conventions": one JSON object a line in the production profile). oidc-provider writes
 * its notices with console.warn/console.info as it is loaded (on Node 20 "Unsupported
 * runtime", which main.ts folds into its own notice), and Node writes process warnings to
 * stderr, both as plain text. main.ts imports this module before any other, so both are
 * caught from the start: held until the logger exists, then logged by it, as is every later one.
 */

interface Held {
  level: 'warn' | 'info';
  message: string;
  fields: Record<string, unknown>;
}

const LIBRARY_LINE = /^(oidc-provider) (WARNING|NOTICE): ([^]*)$/;
// oidc-provider colours its line on a terminal.
// eslint-disable-next-line no-control-regex -- the escape sequences are what is removed
const ANSI = /\x1b\[[0-9;]*m/g;

/** oidc-provider's line, as it is loaded, for a Node version it does not support (on Node 20). */
const RUNTIME_NOTICE = /^Unsupported runtime\b/;

let sink: Logger | undefined;
let runtimeNoticeSaid = false;
const held: Held[] = [];

function emit(entry: Held): void {
  if (!sink) {
    held.push(entry);
    return;
  }
  // The server's own notice says the same, with what to do (server/node-support.ts): one warning, not two.
  if (runtimeNoticeSaid && entry.fields.library === 'oidc-provider' && RUNTIME_NOTICE.test(entry.message)) return;
  sink[entry.level](entry.fields, entry.message);
}

/** A console line a library wrote, or undefined when it is not one this module knows. */
function libraryLine(args: unknown[]): Held | undefined {
  if (args.length !== 1 || typeof args[0] !== 'string') return undefined;
  const match = LIBRARY_LINE.exec(args[0].replace(ANSI, ''));
  if (!match) return undefined;
  return { level: match[2] === 'WARNING' ? 'warn' : 'info', message: match[3]!, fields: { library: match[1] } };
}

for (const method of ['warn', 'info'] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    const line = libraryLine(args);
    if (line) emit(line);
    else original(...args);
  };
}

// Node prints a process warning by a listener of its own; this one replaces it.
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  emit({
    level: 'warn',
    message: warning.message,
    fields: { warning: warning.name, ...((warning as { code?: string }).code ? { code: (warning as { code?: string }).code } : {}) },
  });
});

/**
 * From now on library notices and process warnings are lines of `logger`; the ones held so far
 * are logged first. `runtimeNoticeSaid`: the process says itself that its Node version is
 * unsupported, so oidc-provider's "Unsupported runtime" line is left out.
 */
export function routeLibraryNotices(logger: Logger, options: { runtimeNoticeSaid?: boolean } = {}): void {
  sink = logger;
  runtimeNoticeSaid = options.runtimeNoticeSaid ?? false;
  for (const entry of held.splice(0)) emit(entry);
}

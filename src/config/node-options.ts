/** The node options the process was started with through NODE_OPTIONS (not in process.execArgv). */
export function nodeOptionsFromEnv(): string {
  return process.env.NODE_OPTIONS ?? '';
}

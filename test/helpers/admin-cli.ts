import { runCli } from '../../src/cli/run.js';

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the admin CLI in-process, as `npm run admin -- <argv>` would, capturing both streams;
 * `cwd` is the directory it was run from (relative paths on the command line start there).
 */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, stdin = '', cwd?: string): Promise<AdminRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    readStdin: async () => stdin,
    env,
    ...(cwd ? { cwd } : {}),
  });
  return { code, stdout, stderr };
}

/**
 * The directory a user ran an admin command from: relative paths on its command line
 * (`--jwks-file`, `--generate-keys`) are resolved from there, as of any command-line tool
 * (docs/operations.md, "Admin CLI"). `npm run admin` runs the CLI in the repository's root
 * whatever directory it was typed in, and npm names that directory INIT_CWD; npm sets
 * npm_lifecycle_event to the script it runs, so INIT_CWD counts only under our own `admin`
 * script (a CLI started by some other npm script keeps its own working directory).
 */
export function invocationDirectory(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  return env.npm_lifecycle_event === 'admin' && env.INIT_CWD ? env.INIT_CWD : cwd;
}

/**
 * Where a command writes (`CommandIO`: stdout, stderr, the environment), so tests can capture
 * it; `processIO` is the process's own. Kept apart from `kubectl.ts`, which re-exports both, so
 * that every command's argument parsing (`command-args.ts`) does not load `node:child_process`
 * and YAML with it (start-up, issue 17 goal 5).
 * @module
 */

/** Where the command writes; tests pass their own. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIO: CommandIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
};

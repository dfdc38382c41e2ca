/**
 * The process-wide "please stop" for commands that run until they are told to stop (`run`,
 * `dashboard`, `vendor-sim fault --for`): one AbortSignal, aborted by the first SIGINT or SIGTERM,
 * or by `main.ts` when the output can no longer be written (it emits SIGTERM to the process's own
 * listeners: every long-running command stops as it would for one), or by a SIGHUP (a closed
 * terminal), which `main.ts` also turns into SIGTERM. `main.ts` calls it before it loads `run`, so a SIGTERM that arrives while the command is
 * still loading (a pod deleted right after it started) is a graceful stop with exit code 0, not a
 * death by signal.
 *
 * Idempotent: every call returns the same signal. A second signal is not caught (the default
 * action ends the process), so a stuck shutdown can still be cut short.
 * @module
 */
let signal: AbortSignal | undefined;

export function stopSignal(): AbortSignal {
  if (signal) return signal;
  const abort = new AbortController();
  signal = abort.signal;
  const stop = (name: NodeJS.Signals) => () => abort.abort(new Error(`${name} received`));
  process.once('SIGINT', stop('SIGINT'));
  process.once('SIGTERM', stop('SIGTERM'));
  return signal;
}

/**
 * Preloaded into a benchmarked child process (`node --expose-gc --import …/memory-probe.ts`):
 * on SIGUSR2 it runs a full garbage collection and writes `process.memoryUsage()` and the CPU
 * time used so far, with a sequence number, to the file named by BENCH_MEMORY_FILE. The
 * benchmark sends the signal and waits for the next sequence number, so heap figures are taken
 * after GC (live objects only), not whenever V8 last happened to collect.
 *
 * Plain JavaScript on purpose: a preloaded `.ts` file makes Node load its TypeScript stripper
 * (≈ 15 MB of RSS) into the process being measured, even when that process runs JavaScript.
 * @module
 */
import { writeFileSync, renameSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
let seq = 0;
if (file) {
  process.on('SIGUSR2', () => {
    const gc = globalThis.gc;
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    const cpu = process.cpuUsage();
    seq += 1;
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ seq, gcForced: Boolean(gc), ...m, cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system }));
    renameSync(tmp, file);
  });
}

/**
 * Preloaded into a benchmarked child process (`node --expose-gc --import …/memory-probe.ts`):
 * on SIGUSR2 it runs a full garbage collection and writes `process.memoryUsage()` and the CPU
 * time used so far, with a sequence number, to the file named by BENCH_MEMORY_FILE. The
 * benchmark sends the signal and waits for the next sequence number, so heap figures are taken
 * after GC (live objects only), not whenever V8 last happened to collect. `dataHeapUsed` is the
 * heap without code and bytecode (see below).
 *
 * Plain JavaScript on purpose: a preloaded `.ts` file makes Node load its TypeScript stripper
 * (≈ 15 MB of RSS) into the process being measured, even when that process runs JavaScript.
 * @module
 */
import { writeFileSync, renameSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.BENCH_MEMORY_FILE;
let seq = 0;
if (file) {
  process.on('SIGUSR2', () => {
    const gc = globalThis.gc;
    // V8's "last resort" collection (what a heap snapshot runs): repeated full GCs until nothing
    // more is freed. Two plain gc() calls left up to 4 MiB of dead objects counted as used on a
    // loaded machine (the memory gate read 13.3 MiB where a heap snapshot of the same moment held
    // 9 MiB, and a per-object cost of -8 KB).
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const m = process.memoryUsage();
    const cpu = process.cpuUsage();
    // The heap that holds data, without code (code_space) and bytecode (trusted_space): what
    // cached objects cost, without the functions compiled on first use in between two readings.
    const DATA_SPACES = ['new_space', 'old_space', 'large_object_space', 'new_large_object_space'];
    const dataHeapUsed = getHeapSpaceStatistics().filter((s) => DATA_SPACES.includes(s.space_name)).reduce((n, s) => n + s.space_used_size, 0);
    seq += 1;
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ seq, gcForced: Boolean(gc), ...m, dataHeapUsed, cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system }));
    renameSync(tmp, file);
  });
}

/**
 * The Node.js flags a long-running operator process is started with (the image's ENTRYPOINT;
 * the benchmarks and the memory gate start the operator the same way).
 * `test/packaging/node-flags.test.ts` checks that the Dockerfile uses exactly these.
 *
 * An operator waits on the network; its JavaScript is not where its time goes. These flags trade
 * some of V8's speed for memory (ADR 0034; after a cold start of 500 Microservices, 2,000 cached
 * objects, full GC, on this project's machine):
 * - `--max-semi-space-size=2`: V8's young generation at 2 MiB per semi-space (default up to
 *   16 MiB, grown under load and kept committed). RSS 124 → 102 MiB.
 * - `--no-opt --no-maglev`: no optimizing compilers (TurboFan, Maglev); functions run in the
 *   interpreter and the Sparkplug baseline code. Their code, their type feedback and the compilers'
 *   own pages in the `node` binary are never loaded. RSS 102 → 84 MiB; heap used 19.7 → 17.7 MiB.
 * - `--optimize-for-size`: V8's own size-over-speed choices. Idle RSS 71.3 → 69.3 MiB.
 * Cost: cold start of 500 just as fast (37 s vs 38–39 s), its CPU time 7.5 s vs 6.5–7.0 s; a
 * periodic check ≈ 1 ms of CPU instead of ≈ 0.75 ms. One-shot CLI commands do not use them.
 *
 * Caveat: these are V8 options, not Node.js's documented ones; a Node.js upgrade whose V8 drops
 * one makes `node` refuse to start, which the image test (`test/image/`) would show.
 * @module
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--no-opt', '--no-maglev', '--optimize-for-size'];

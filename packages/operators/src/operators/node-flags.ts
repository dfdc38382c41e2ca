/**
 * The Node.js flags a long-running operator process is started with (the image's ENTRYPOINT;
 * the benchmarks start the operator the same way). `test/packaging/node-flags.test.ts` checks that
 * the Dockerfile uses exactly these.
 *
 * `--max-semi-space-size=2` caps V8's young generation at 2 MiB per semi-space (default 16 MiB,
 * grown under load and kept committed). Measured on the memory benchmark's operator after a cold
 * start of 500 Microservices: RSS 124 → 99 MiB, the heap unchanged, CPU time within the noise of
 * the machine (ADR 0034). One-shot CLI commands do not need it.
 * @module
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * Loaded into every test process (`scripts/test.ts` passes `--import`): with `CONVERGE_FC_SEED`
 * set, every fast-check property in the run starts from that seed, so a failure that CI met (its
 * report prints `seed: …`) replays locally: `CONVERGE_FC_SEED=<seed> npm test -- <file>
 * --test-name-pattern=<test>`. A property that sets its own `seed` keeps it.
 * @module
 */
import fc from 'fast-check';

const seed = process.env.CONVERGE_FC_SEED;
if (seed !== undefined && seed !== '') {
  const value = Number(seed);
  if (!Number.isInteger(value)) throw new Error(`CONVERGE_FC_SEED must be an integer (fast-check's report prints it), not ${JSON.stringify(seed)}`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: value });
}

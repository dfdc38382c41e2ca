/**
 * The parts of `converge dev` (the command itself is `packages/operators/src/cli/commands/dev.ts`): the samples it
 * applies, pointed at the local vendor simulator, and the live screen it draws. Pure functions,
 * apart from `loadSamples`, which reads `deploy/samples/`.
 * @module
 */
export { loadSamples, prepareSamples, describeSamples } from './samples.ts';
export type { SampleObject, SimulatorTarget } from './samples.ts';
export { renderDevScreen, commandsToTry } from './screen.ts';
export type { DevInfo, ScreenInput } from './screen.ts';

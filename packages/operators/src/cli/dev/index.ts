/**
 * The parts of `converge dev` (the command itself is `packages/operators/src/cli/commands/dev.ts`): the samples it
 * applies, pointed at the local vendor simulator, and when it calls them Ready; the operators'
 * configuration it runs with; the live screen it draws; and the handle file through which
 * `converge vendor-sim fault` finds its simulator. Pure functions, apart from `loadSamples`, which
 * reads `deploy/samples/`, `applySamples`, which writes them to the cluster, and the handle
 * file's read and write.
 * @module
 */
export { loadSamples, prepareSamples, describeSamples } from './samples.ts';
export type { SampleObject, SimulatorTarget } from './samples.ts';
export { applySamples, sampleKeys, samplesReady } from './apply-samples.ts';
export { devOperatorConfig, DEV_PROGRESS_DEADLINE_SECONDS } from './operator-config.ts';
export { renderDevScreen, commandsToTry } from './screen.ts';
export type { DevInfo, ScreenInput } from './screen.ts';
export { defaultVendorSimHandlePath, readVendorSimHandle, removeVendorSimHandle, writeVendorSimHandle } from './vendor-sim-handle.ts';
export type { VendorSimHandle } from './vendor-sim-handle.ts';

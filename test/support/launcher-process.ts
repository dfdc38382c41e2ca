/**
 * A process that starts one local control plane (the envtest launcher) and keeps it running:
 * what the launcher kill-point tests SIGKILL at chosen moments. Prints each progress line of the
 * launcher on stdout, then `ready <stateDir>`. The binary is `CONVERGE_TEST_CONTROL_PLANE_BIN`.
 * @module
 */
import { startControlPlane } from '@converge/envtest';

const binary = process.env.CONVERGE_TEST_CONTROL_PLANE_BIN;
const cp = await startControlPlane({ ...(binary ? { binary } : {}), onProgress: (m) => console.log(m) });
console.log(`ready ${cp.stateDir}`);
setInterval(() => {}, 1 << 30);

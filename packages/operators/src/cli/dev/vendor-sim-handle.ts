/**
 * How `converge vendor-sim fault` finds the simulator a running `converge dev` started: dev
 * writes a small JSON file (`vendor-sim.json`, beside its kubeconfig, mode 0600 because it holds
 * the admin token) with the simulator's URL, CA file and admin token, and removes it when it
 * stops. The /v1 token (the one in the provider's Secret) is never in it.
 *
 * Guarantees: `readVendorSimHandle` either returns a complete handle or throws an Error whose
 * message says what to do (start `npm start`, or pass `--sim`).
 * @module
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface VendorSimHandle {
  /** `https://127.0.0.1:<port>` of the simulator. */
  baseUrl: string;
  /** PEM file of the CA that signed its certificate. */
  caPath: string;
  /** Bearer token of its /admin endpoints. */
  adminToken: string;
  /** The `converge dev` process that runs it. */
  pid: number;
}

/** Where `converge dev` writes the handle by default, for the working directory `cwd`. */
export function defaultVendorSimHandlePath(cwd = process.cwd()): string {
  return join(cwd, '.converge', 'dev', 'vendor-sim.json');
}

export async function writeVendorSimHandle(path: string, handle: VendorSimHandle): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(handle, null, 2)}\n`, { mode: 0o600 });
}

export async function removeVendorSimHandle(path: string): Promise<void> {
  await rm(path, { force: true });
}

export async function readVendorSimHandle(path: string): Promise<VendorSimHandle> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new Error(`no running vendor simulator found: ${path} does not exist. Start one with \`npm start\` (converge dev), or name another dev session's file with --sim`);
  }
  let handle: Partial<VendorSimHandle>;
  try {
    handle = JSON.parse(text) as Partial<VendorSimHandle>;
  } catch {
    throw new Error(`${path} is not a vendor simulator handle (not JSON)`);
  }
  if (typeof handle.baseUrl !== 'string' || typeof handle.caPath !== 'string' || typeof handle.adminToken !== 'string' || typeof handle.pid !== 'number') {
    throw new Error(`${path} is not a vendor simulator handle (it needs baseUrl, caPath, adminToken and pid)`);
  }
  return handle as VendorSimHandle;
}

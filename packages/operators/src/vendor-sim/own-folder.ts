/**
 * The simulator's own temporary folder (when it is given none): made with an `owner.pid` file,
 * removed by `stop`, and — since a SIGKILLed process cannot remove it, and it holds the CA's and the
 * server's private keys — swept by a later start once its owner is gone. The envtest launcher
 * sweeps its state folders the same way; the simulator shares no code with the runtime or the
 * control plane (it plays the vendor), hence its own few lines.
 *
 * Guarantees: a folder is swept only when its owner pid is not alive (a reused pid keeps it, the
 * safe side), or, with no owner file (a kill between making the folder and writing it), when it
 * has not changed for ten minutes.
 * @module
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'converge-vendor-sim-';
const OWNER_FILE = 'owner.pid';
const UNOWNED_AFTER_MS = 10 * 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the folders of simulators that are gone; never throws. */
export async function sweepAbandonedFolders(base: string = tmpdir(), now: number = Date.now()): Promise<string[]> {
  const swept: string[] = [];
  let names: string[] = [];
  try {
    names = (await readdir(base)).filter((n) => n.startsWith(PREFIX));
  } catch {
    return swept;
  }
  for (const name of names) {
    const dir = join(base, name);
    try {
      const owner = await readFile(join(dir, OWNER_FILE), 'utf8').then((t) => Number.parseInt(t, 10), () => undefined);
      const abandoned = owner === undefined
        ? now - (await stat(dir)).mtimeMs > UNOWNED_AFTER_MS
        : Number.isInteger(owner) && owner > 0 && owner !== process.pid && !alive(owner);
      if (!abandoned) continue;
      await rm(dir, { recursive: true, force: true });
      swept.push(dir);
    } catch {
      // gone meanwhile, or not ours to read: leave it
    }
  }
  return swept;
}

/** A new folder owned by this process (after sweeping abandoned ones). */
export async function makeOwnFolder(base: string = tmpdir()): Promise<string> {
  await sweepAbandonedFolders(base);
  const dir = await mkdtemp(join(base, PREFIX));
  await writeFile(join(dir, OWNER_FILE), String(process.pid));
  return dir;
}

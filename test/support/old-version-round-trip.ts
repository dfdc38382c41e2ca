/**
 * What an old client does to an object it does not change: read it through an older served
 * version of its kind and write it back as read. For the conversion tests, which then compare the
 * object in the hub version with what it was.
 */
import assert from 'node:assert/strict';
import type { KubeClient } from '@converge/runtime';

/** GET and PUT the object at `path` (an older version's URL); fails the test when the write is refused. */
export async function writeBackAsRead(client: KubeClient, path: string): Promise<void> {
  const old = await client.request<Record<string, unknown>>('GET', path);
  try {
    await client.request('PUT', path, { body: old });
  } catch (err) {
    assert.fail(`writing back the ${path.split('/')[3]} view unchanged is refused: ${err instanceof Error ? err.message.slice(0, 400) : String(err)}`);
  }
}

/**
 * `converge dev` refuses what it cannot use before it starts a control plane (a minute on a cold
 * build cache): a namespace that is not a DNS label, a dashboard address that is not host:port,
 * or one off loopback (the local dashboard has no token). Each is a usage error, exit 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run } from './dev.ts';

async function stderrOf(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => ((err += String(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await run(argv), err };
  } finally {
    process.stderr.write = write;
  }
}

test('a bad --namespace or --dashboard is a usage error before anything starts', async () => {
  for (const [argv, message] of [
    [['--namespace', 'Bad_NS'], /--namespace must be a DNS label .*"Bad_NS"/],
    [['--namespace', 'x'.repeat(64)], /--namespace must be a DNS label/],
    [['--dashboard', 'nope'], /--dashboard must be host:port or "off"/],
    [['--dashboard', '0.0.0.0:7070'], /--dashboard must be a loopback address/],
  ] as const) {
    const { code, err } = await stderrOf(['--no-ui', ...argv]);
    assert.equal(code, 2, argv.join(' '));
    assert.match(err, message);
  }
});

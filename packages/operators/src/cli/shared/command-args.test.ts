import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandArgs } from './command-args.ts';

const OPTIONS = { namespace: { type: 'string', short: 'n' }, output: { type: 'string', short: 'o' }, all: { type: 'boolean', short: 'A' } } as const;

function parse(argv: string[]) {
  const out: string[] = [];
  const parsed = parseCommandArgs('status', 'Usage: converge status\n', argv, OPTIONS, true, { stdout: (s) => out.push(s), stderr: (s) => out.push(s) });
  return { parsed: parsed as { exitCode?: number; values?: Record<string, unknown>; positionals?: string[] }, out: out.join('') };
}

test('-n=team-a means namespace team-a, as kubectl (pflag) reads it, not "=team-a"', () => {
  assert.equal(parse(['-n=team-a']).parsed.values?.namespace, 'team-a');
  assert.equal(parse(['-o=json', '-n', 'b']).parsed.values?.output, 'json');
  // Without "=", and the long forms, are as before.
  assert.equal(parse(['-nteam-a']).parsed.values?.namespace, 'team-a');
  assert.equal(parse(['--namespace=team-a']).parsed.values?.namespace, 'team-a');
  assert.equal(parse(['-n', '=x']).parsed.values?.namespace, '=x', 'a value given as its own word is kept as typed');
  // After "--" every word is a positional, untouched.
  assert.deepEqual(parse(['--', '-n=team-a']).parsed.positionals, ['-n=team-a']);
  // A boolean short flag takes no value: "-A=x" stays an error.
  assert.equal(parse(['-A=x']).parsed.exitCode, 2);
});

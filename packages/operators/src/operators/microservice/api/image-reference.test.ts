import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IMAGE_REFERENCE_PATTERN, isValidImageReference } from './image-reference.ts';

test('accepts the references people use', () => {
  for (const ref of [
    'ghcr.io/yrw9281/it30-todo-api:0.1.0',
    'nginx',
    'nginx:1.27-alpine',
    'library/nginx:latest',
    'localhost:5000/app:1',
    'registry.example.com:443/team/sub/app_v2:2024.01.01',
    'my-registry.local/a__b/c--d/e.f:Tag_1',
    `ghcr.io/org/app@sha256:${'a'.repeat(64)}`,
    `ghcr.io/org/app:1.0@sha256:${'0'.repeat(64)}`,
    'UPPER.example.com/app',
  ]) {
    assert.ok(isValidImageReference(ref), ref);
  }
});

test('rejects what is not an image reference', () => {
  for (const ref of [
    '',
    ' nginx',
    'nginx ',
    'Nginx',
    'app:',
    'app:-tag',
    'http://ghcr.io/app',
    'ghcr.io/Org/app',
    'ghcr.io//app',
    'app@sha256:abc',
    'app:tag:tag',
    '-app',
    'app-',
    `app:${'t'.repeat(129)}`,
    'a'.repeat(513),
  ]) {
    assert.equal(isValidImageReference(ref), false, ref);
  }
});

test('the pattern is safe inside a single-quoted CEL string and for RE2', () => {
  assert.ok(!IMAGE_REFERENCE_PATTERN.includes('\\'));
  assert.ok(!IMAGE_REFERENCE_PATTERN.includes("'"));
  assert.ok(!/\(\?[=!<]/.test(IMAGE_REFERENCE_PATTERN));
});

test('the pattern does not backtrack badly on hostile input', () => {
  const started = performance.now();
  for (const ref of ['a'.repeat(500) + '!', 'a-'.repeat(250) + '!', 'a.'.repeat(250) + ':', 'a_'.repeat(250) + '/']) isValidImageReference(ref);
  assert.ok(performance.now() - started < 500);
});

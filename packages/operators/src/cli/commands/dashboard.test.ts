import { test } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { clusterNameFromContext, parseClusterFlag } from './dashboard.ts';

test('--kubeconfig NAME=PATH names the cluster; a bare PATH is named by its context', () => {
  assert.deepEqual(parseClusterFlag('prod-eu=/home/me/.kube/eu.yaml'), { name: 'prod-eu', path: '/home/me/.kube/eu.yaml' });
  assert.deepEqual(parseClusterFlag('/home/me/.kube/config'), { name: undefined, path: '/home/me/.kube/config' });
  assert.deepEqual(parseClusterFlag('./a=b/config'), { name: undefined, path: './a=b/config' }, 'an "=" inside a path is not a name');
  assert.equal(clusterNameFromContext('arn:aws:eks:eu-west-1:123456789012:cluster/prod'), 'arn-aws-eks-eu-west-1-123456789012-cluster-prod');
  assert.equal(clusterNameFromContext('kind-dev'), 'kind-dev');
  assert.equal(clusterNameFromContext('@@@'), 'cluster');
});

test('NAME=~/path: the shell leaves that ~ alone (NAME= is no assignment), so the flag expands it, as the README writes it', () => {
  assert.deepEqual(parseClusterFlag('prod-eu=~/.kube/eu.yaml'), { name: 'prod-eu', path: join(homedir(), '.kube/eu.yaml') });
  assert.deepEqual(parseClusterFlag('~/.kube/config'), { name: undefined, path: join(homedir(), '.kube/config') });
  assert.deepEqual(parseClusterFlag('prod=~other/x'), { name: 'prod', path: '~other/x' }, 'another user\'s home is not guessed');
});

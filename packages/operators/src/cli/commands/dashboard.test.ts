import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterNameFromContext, parseClusterFlag } from './dashboard.ts';

test('--kubeconfig NAME=PATH names the cluster; a bare PATH is named by its context', () => {
  assert.deepEqual(parseClusterFlag('prod-eu=/home/me/.kube/eu.yaml'), { name: 'prod-eu', path: '/home/me/.kube/eu.yaml' });
  assert.deepEqual(parseClusterFlag('/home/me/.kube/config'), { name: undefined, path: '/home/me/.kube/config' });
  assert.deepEqual(parseClusterFlag('./a=b/config'), { name: undefined, path: './a=b/config' }, 'an "=" inside a path is not a name');
  assert.equal(clusterNameFromContext('arn:aws:eks:eu-west-1:123456789012:cluster/prod'), 'arn-aws-eks-eu-west-1-123456789012-cluster-prod');
  assert.equal(clusterNameFromContext('kind-dev'), 'kind-dev');
  assert.equal(clusterNameFromContext('@@@'), 'cluster');
});

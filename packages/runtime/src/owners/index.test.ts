import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineKind } from '../objects/index.ts';
import { controllerReference, controllerOf, ownershipOf, isControlledBy, refersToKind } from './index.ts';

const Kind = defineKind({ group: 'platform.example.io', version: 'v1alpha1', kind: 'Microservice', plural: 'microservices', namespaced: true });
const owner = { metadata: { name: 'a', namespace: 'n', uid: 'u1' } };

test('controllerReference marks controller and blocks owner deletion', () => {
  assert.deepEqual(controllerReference(owner, Kind), {
    apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', name: 'a', uid: 'u1', controller: true, blockOwnerDeletion: true,
  });
  assert.throws(() => controllerReference({ metadata: { name: 'x' } }, Kind));
});

test('ownership checks UID, API group, kind and controller; another served version of the owner is the same owner', () => {
  const ref = controllerReference(owner, Kind);
  const child = (refs: object[]) => ({ metadata: { name: 'a', ownerReferences: refs as never } });
  assert.equal(ownershipOf(child([ref]), owner, Kind), 'owned');
  assert.equal(isControlledBy(child([ref]), owner, Kind), true);
  assert.equal(ownershipOf(child([]), owner, Kind), 'unowned');
  assert.equal(ownershipOf(child([{ ...ref, controller: false }]), owner, Kind), 'unowned');
  assert.equal(ownershipOf(child([{ ...ref, uid: 'old' }]), owner, Kind), 'foreign', 'an older CR of the same name');
  assert.equal(ownershipOf(child([{ ...ref, kind: 'Other' }]), owner, Kind), 'foreign');
  assert.equal(ownershipOf(child([{ ...ref, apiVersion: 'platform.example.io/v2' }]), owner, Kind), 'owned', 'a reference written for another served version');
  assert.equal(ownershipOf(child([{ ...ref, apiVersion: 'other.example.io/v1' }]), owner, Kind), 'foreign', 'another group');
  assert.equal(controllerOf(child([{ ...ref, controller: false }, ref]))?.uid, 'u1');
});

test('refersToKind compares API group and kind, never the version; the core group has no slash', () => {
  const ref = (apiVersion: string, kind: string) => ({ apiVersion, kind, name: 'a', uid: 'u1' });
  assert.ok(refersToKind(ref('platform.example.io/v1', 'Microservice'), Kind));
  assert.ok(refersToKind(ref('platform.example.io/v1alpha1', 'Microservice'), Kind));
  assert.ok(!refersToKind(ref('other.example.io/v1alpha1', 'Microservice'), Kind));
  assert.ok(!refersToKind(ref('platform.example.io/v1alpha1', 'Deployment'), Kind));
  const Core = defineKind({ group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true });
  assert.ok(refersToKind(ref('v1', 'Service'), Core));
  assert.ok(!refersToKind(ref('apps/v1', 'Service'), Core));
});

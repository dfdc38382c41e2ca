/**
 * Test support for this folder's tests (named `*.test-support.ts`: the pack step leaves it out of
 * the published build): a toy kind, `toys.example.com` Box, whose v1 has `spec.size` and whose
 * hub v2 calls it `spec.dimensions.size`; converting a size of 13 from v2 to v1 fails.
 * @module
 */
import { ConversionRegistry } from './conversion.ts';
import type { KubeObject } from '../objects/index.ts';

export function toyBoxConversions(): ConversionRegistry {
  return new ConversionRegistry().register({
    group: 'toys.example.com',
    kind: 'Box',
    hub: 'v2',
    spokes: [{
      version: 'v1',
      toHub: (o: KubeObject & { spec?: { size?: number } }) => ({ ...o, spec: { dimensions: { size: o.spec?.size } } }),
      fromHub: (o: KubeObject & { spec?: { dimensions?: { size?: number } } }) => {
        if (o.spec?.dimensions?.size === 13) throw new Error('13 is unlucky');
        return { ...o, spec: { size: o.spec?.dimensions?.size } };
      },
    }],
  });
}

/**
 * twylt's own packages in a pack's npm requirements (ADR 0035): never fetched from the
 * registry while it does not hold them, linked to the scanning installation instead; its
 * exact version from the registry once a release publishes them (OWN_ON_REGISTRY).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OWN_ON_REGISTRY, planOwn } from '../../packages/twylt/src/toolset/catalog/own-packages.js';
import { ROOT } from '../support/process.js';

const SPECS = ['@scope/twylt@1.0.0', 'slugify@^1.6.6', 'twylt-ai@*', 'twylt@^0.1.0', 'twylty@2.0.0'];
const version = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')) as { version: string }).version;

describe('own packages', () => {
  it('are not on the registry today: linked to this installation, the rest left to npm', () => {
    expect(OWN_ON_REGISTRY).toBe(false);
    expect(planOwn(SPECS)).toEqual({
      specs: ['@scope/twylt@1.0.0', 'slugify@^1.6.6', 'twylty@2.0.0'],
      links: { 'twylt-ai': join(ROOT, 'packages', 'twylt-ai'), twylt: join(ROOT, 'packages', 'twylt') },
    });
  });

  it('once on the registry: this exact version from there, nothing linked', () => {
    expect(planOwn(SPECS, true)).toEqual({
      specs: ['@scope/twylt@1.0.0', 'slugify@^1.6.6', `twylt-ai@${version('twylt-ai')}`, `twylt@${version('twylt')}`, 'twylty@2.0.0'],
      links: {},
    });
  });
});

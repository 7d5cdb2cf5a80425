/**
 * twylt's own packages (twylt, twylt-ai, twylt-mcp) in a pack's npm requirements. They are
 * not on the npm registry (ADR 0035), where another package could take their names: an
 * environment never installs them from there. It links the scanning installation's own copy
 * instead, so the pack's tools use the twylt that scanned them. When a release publishes
 * them, OWN_ON_REGISTRY turns true and the environment installs this exact version.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { OWN_PACKAGE } from '../../bootstrap/resolve.js';

export const OWN_ON_REGISTRY = false;

/** How an environment gets the own packages among `specs` (`name@range`): registry specs, or links to folders. */
export interface OwnPlan {
  /** The specs left for npm. */
  specs: string[];
  /** Package name -> the folder of the scanning installation's copy. */
  links: Record<string, string>;
}

export function planOwn(specs: readonly string[], onRegistry = OWN_ON_REGISTRY): OwnPlan {
  const plan: OwnPlan = { specs: [], links: {} };
  for (const spec of specs) {
    const name = nameOf(spec);
    if (!OWN_PACKAGE.test(name)) {
      plan.specs.push(spec);
      continue;
    }
    const folder = ownFolder(name);
    // Not beside this twylt: left out, never fetched under its name from a registry that does not hold it.
    if (folder === undefined) continue;
    if (onRegistry) plan.specs.push(`${name}@${versionOf(folder)}`);
    else plan.links[name] = folder;
  }
  return plan;
}

/** `name@range` -> name (a scoped name keeps its first `@`). */
function nameOf(spec: string): string {
  const at = spec.indexOf('@', 1);
  return at === -1 ? spec : spec.slice(0, at);
}

/** The folder of the installed package `name` as this twylt resolves it (itself, or a sibling). */
function ownFolder(name: string): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function versionOf(folder: string): string {
  return (JSON.parse(readFileSync(`${folder}/package.json`, 'utf8')) as { version: string }).version;
}

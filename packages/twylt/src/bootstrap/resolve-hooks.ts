/**
 * The module hooks of the launcher on a Node without `module.registerHooks` (before 22.15),
 * loaded by `module.register` into Node's hooks thread: the same resolution as resolve.ts.
 */
import { resolveAsync, type ResolveData } from './resolve.js';

let hook: ReturnType<typeof resolveAsync> | undefined;

export function initialize(data: ResolveData): void {
  hook = resolveAsync(data);
}

export function resolve(...args: Parameters<ReturnType<typeof resolveAsync>>): ReturnType<ReturnType<typeof resolveAsync>> {
  return hook ? hook(...args) : args[2](args[0], args[1]);
}

/**
 * The input being edited, as one Json value shared by the form and the JSON view: reading
 * and replacing the value at a path without changing the rest (so the views stay in step).
 */
import { formatPath, type PathSegment } from '../../protocol/issues.js';
import { isObject, put, type Json, type JsonObject } from './json.js';

export type Path = readonly PathSegment[];

/** `point.x`, `tags[0].label`: the paths of TWYLT's issues, so each issue finds its field. */
export const pathText = (path: Path): string => formatPath(path);

export function getAt(value: Json | undefined, path: Path): Json | undefined {
  let node = value;
  for (const segment of path) {
    if (typeof segment === 'number') node = Array.isArray(node) ? node[segment] : undefined;
    else node = isObject(node) && Object.hasOwn(node, segment) ? node[segment] : undefined;
  }
  return node;
}

/**
 * A copy of `value` with `next` at `path`: `undefined` removes an object's key (an array
 * item has no "unset": it becomes null). Parents missing on the way are made.
 */
export function setAt(value: Json | undefined, path: Path, next: Json | undefined): Json | undefined {
  if (path.length === 0) return next;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = setAt(list[head], rest, next) ?? null;
    return list;
  }
  const out: JsonObject = {};
  if (isObject(value)) for (const key of Object.keys(value)) put(out, key, value[key]!);
  const child = setAt(isObject(value) && Object.hasOwn(value, head!) ? value[head!] : undefined, rest, next);
  if (child === undefined) delete out[head!];
  else put(out, head!, child);
  return out;
}

/** A copy of `value` without the array item or object key at `path`. */
export function removeAt(value: Json | undefined, path: Path): Json | undefined {
  const parent = path.slice(0, -1);
  const last = path[path.length - 1];
  if (typeof last !== 'number') return setAt(value, path, undefined);
  const list = getAt(value, parent);
  return Array.isArray(list) ? setAt(value, parent, list.filter((_, i) => i !== last)) : value;
}

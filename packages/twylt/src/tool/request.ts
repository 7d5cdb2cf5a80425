/**
 * What a run reads as its request. A module of its own, so that hooks.ts (which hands a
 * request over) and transport.ts (which reads one) need not import each other: hooks,
 * stdin and transport stand in a line.
 */
export type JsonObject = Record<string, unknown>;

/** A payload that arrived on the command line or stdin. */
export interface Request {
  source: 'cli' | 'stdin';
  payload: JsonObject;
}

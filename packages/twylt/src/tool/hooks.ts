/**
 * Hand-offs between a launcher (twylt/bootstrap) or a built single file (twylt build) and the
 * run loop in the same process.
 * Keyed by Symbol.for so that two copies of twylt loaded side by side still meet.
 */
import type { JsonSpec } from '../protocol/spec.js';
import type { Request } from './request.js';

export type { JsonSpec };

const STDIN_KEY = Symbol.for('twylt.replayedStdin');
const REQUEST_KEY = Symbol.for('twylt.handedRequest');
const SPEC_KEY = Symbol.for('twylt.embeddedSpec');
const HELD_KEY = Symbol.for('twylt.heldRuns');

/** A run held while a snapshot is built: how to start it, and how to compile its path ahead. */
export interface HeldRun {
  start(): Promise<never>;
  warmUp(): Promise<void>;
}

type Slots = { [STDIN_KEY]?: Buffer; [REQUEST_KEY]?: Request; [SPEC_KEY]?: JsonSpec; [HELD_KEY]?: HeldRun[] };

/** A launcher that already consumed stdin hands the bytes over, to be read once. */
export function replayStdin(bytes: Buffer): void {
  (globalThis as Slots)[STDIN_KEY] = bytes;
}

export function takeReplayedStdin(): Buffer | undefined {
  return takeOnce(STDIN_KEY);
}

/**
 * A launcher that already read and parsed this process's request (a payload that is not a
 * describe request) hands it over whole: a large payload is then not decoded and parsed twice.
 */
export function handOverRequest(request: Request): void {
  (globalThis as Slots)[REQUEST_KEY] = request;
}

export function takeHandedRequest(): Request | undefined {
  return takeOnce(REQUEST_KEY);
}

/** A hand-over is read once: a second run in the same process starts from its own input. */
function takeOnce<K extends keyof Slots>(key: K): Slots[K] {
  const slots = globalThis as Slots;
  const value = slots[key];
  delete slots[key];
  return value;
}

/** A built single file (`twylt build`) carries the json_spec computed at build time. */
export function embedSpec(spec: JsonSpec): void {
  (globalThis as Slots)[SPEC_KEY] = spec;
}

export function embeddedSpec(): JsonSpec | undefined {
  return (globalThis as Slots)[SPEC_KEY];
}

/**
 * While a startup snapshot is built (`twylt build --executable`), the tool module is
 * evaluated but its run must wait until the binary starts: `run()` hands it over instead
 * of running. Returns a function that ends the hold and gives the held runs.
 */
export function holdRuns(): () => HeldRun[] {
  (globalThis as Slots)[HELD_KEY] = [];
  return () => takeOnce(HELD_KEY) ?? [];
}

/** True when the run was held (see holdRuns): the caller must not start it. */
export function heldRun(run: HeldRun): boolean {
  const held = (globalThis as Slots)[HELD_KEY];
  held?.push(run);
  return held !== undefined;
}

const TURN_KEY = Symbol.for('twylt.launcherTurn');

/**
 * What a launcher decides once the request has arrived: the run goes on (its input handed
 * over as above), or the launcher answered itself and the run ends with `code`.
 */
export type LauncherTurn = { go: true } | { go: false; code: number };

interface Held {
  turn: Promise<LauncherTurn>;
  taken: () => void;
}

/**
 * A launcher that imports the tool before its input arrives (a warm process, ADR 0035)
 * makes the run wait, once it has prepared what it can, until the request is read.
 * `taken` is called when the run starts waiting. Returns the function that decides; once.
 */
export function holdUntilRequest(taken: () => void): (turn: LauncherTurn) => void {
  let release!: (turn: LauncherTurn) => void;
  (globalThis as { [TURN_KEY]?: Held })[TURN_KEY] = { turn: new Promise((done) => (release = done)), taken };
  return release;
}

/** The launcher's decision, or undefined when no launcher holds the run. Taken once. */
export function launcherTurn(): Promise<LauncherTurn> | undefined {
  const slots = globalThis as { [TURN_KEY]?: Held };
  const held = slots[TURN_KEY];
  delete slots[TURN_KEY];
  held?.taken();
  return held?.turn;
}

/** The author-facing API: the `Tool` base class and `defineTool`, over one run loop. */
import type { InferInput, InferOutput, SchemaLike } from '../schema/types.js';
import type { FewShot, Requirements, ToolDefinition, ToolMetadata } from './definition.js';
import { expectExit } from './biz.js';
import { heldRun } from './hooks.js';
import { processIo, runTool, warmUp, type RunIo } from './run.js';

type Awaitable<T> = T | Promise<T>;

/**
 * Subclass, set the fields, implement `biz`, then call `MyTool.run()`.
 * `biz` receives the validated input with defaults applied and returns the output.
 */
export abstract class Tool<I extends SchemaLike = SchemaLike, O extends SchemaLike = SchemaLike> {
  abstract inputSchema: I;
  abstract outputSchema: O;
  name?: string;
  version?: string;
  description?: string;
  inputSchemaName?: string;
  inputSchemaVersion?: string;
  outputSchemaName?: string;
  outputSchemaVersion?: string;
  requirements?: Requirements;
  /**
   * Typed with literal types widened (`'upper'` as string): a subclass's field is not typed
   * by this declaration (TypeScript infers it from its initializer alone), so an enum value
   * would otherwise need `as const`. `twylt check` validates each few-shot against the schemas.
   */
  fewShots?: readonly FewShot<Widened<InferInput<I>>, Widened<InferInput<O>>>[];

  abstract biz(input: InferOutput<I>): Awaitable<InferInput<O>>;

  /** Runs the protocol for this tool class with the process's argv, environment and stdio, then exits. */
  static run<T extends Tool<any, any>>(this: new () => T): Promise<never> {
    return runMain(new this() as unknown as ToolDefinition);
  }

  /** One protocol run with the given I/O; resolves to the exit code and does not exit. */
  static runWith<T extends Tool<any, any>>(this: new () => T, io: RunIo): Promise<number> {
    return runTool(new this() as unknown as ToolDefinition, io);
  }
}

/** A value's type with its literal types widened to their primitives, at every depth; arrays may be readonly. */
export type Widened<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer E)[]
        ? readonly Widened<E>[]
        : T extends object
          ? { [K in keyof T]: Widened<T[K]> }
          : T;

export interface ToolSpec<I extends SchemaLike, O extends SchemaLike> extends ToolMetadata {
  inputSchema: I;
  outputSchema: O;
  fewShots?: readonly FewShot<InferInput<I>, InferInput<O>>[];
  biz(input: InferOutput<I>): Awaitable<InferInput<O>>;
}

export interface DefinedTool<I extends SchemaLike, O extends SchemaLike> extends ToolSpec<I, O> {
  /** Runs the protocol with the process's argv, environment and stdio, then exits. */
  run(): Promise<never>;
  /** One protocol run with the given I/O; resolves to the exit code and does not exit. */
  runWith(io: RunIo): Promise<number>;
}

/** The same runtime without a class. Types flow from the schemas into `biz`. */
export function defineTool<I extends SchemaLike, O extends SchemaLike>(spec: ToolSpec<I, O>): DefinedTool<I, O> {
  const definition = spec as unknown as ToolDefinition;
  return {
    ...spec,
    run: () => runMain(definition),
    runWith: (io) => runTool(definition, io),
  };
}

/** A whole process: run once, make sure stdout is flushed, exit with the protocol's code. */
async function runMain(tool: ToolDefinition): Promise<never> {
  // A startup snapshot is being built: this run starts when the binary does.
  if (heldRun({ start: () => runMain(tool), warmUp: () => warmUp(tool) })) return new Promise<never>(() => {});
  guardProcess();
  const code = await runTool(tool, processIo());
  process.exit(code);
}

/** Symbol.for: a built file's entry and its tool bundle each carry a copy of this module. */
const GUARDED = Symbol.for('twylt.guarded');

/** The process-wide handlers of a run; once per process (a built file's entry installs them first). */
export function guardProcess(): void {
  const slots = globalThis as { [GUARDED]?: true };
  if (slots[GUARDED]) return;
  slots[GUARDED] = true;
  // A consumer that stops reading early must not turn into a stack trace.
  process.stdout.on('error', () => {
    expectExit();
    process.exit(process.exitCode ?? 0);
  });
  // Nor one that closed stderr: the exit code still tells what happened.
  process.stderr.on('error', () => {});
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      expectExit();
      process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
    });
  }
}

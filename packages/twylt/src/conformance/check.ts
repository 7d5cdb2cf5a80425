/** What a check is, and what it gets to work with. */
import type { SchemaValidator } from '../client/schema-check.js';
import type { ToolSpec } from '../client/types.js';
import type { Prober, ProbeRequest } from './probe.js';
import type { CheckStatus, Evidence } from './types.js';

/** Facts gathered before the checks run; later checks build on them. */
export interface SuiteContext {
  /** The tool's json_spec, when it could be read at all. */
  spec?: ToolSpec;
  /** Validators of the published schemas, when they compile. */
  validateInput?: SchemaValidator;
  validateOutput?: SchemaValidator;
  /** An input the published inputSchema accepts (a few-shot input, else generated). */
  base?: Record<string, unknown>;
  baseSource?: string;
}

export interface Verdict {
  status: CheckStatus;
  message: string;
}

export interface CheckDef {
  id: string;
  title: string;
  /** What must be known before it can run; without it the check is skipped. */
  needs?: Array<'spec' | 'schemas' | 'base'>;
  run(t: CheckRun): Promise<Verdict>;
}

/** A module of checks: a list built from what is known about the tool. */
export type CheckGroup = (context: SuiteContext) => CheckDef[];

/** The handle a check works through; every probe it makes becomes evidence. */
export class CheckRun {
  readonly evidence: Evidence[] = [];

  constructor(
    readonly context: SuiteContext,
    private readonly prober: Prober,
  ) {}

  get spec(): ToolSpec {
    if (!this.context.spec) throw new Error('this check needs the spec');
    return this.context.spec;
  }

  get base(): Record<string, unknown> {
    if (!this.context.base) throw new Error('this check needs a valid input');
    return this.context.base;
  }

  async probe(request: ProbeRequest): Promise<Evidence> {
    const run = await this.prober(request);
    this.evidence.push(run);
    return run;
  }
}

function pass(message: string): Verdict {
  return { status: 'pass', message };
}

export function skip(message: string): Verdict {
  return { status: 'skip', message };
}

export function warn(message: string): Verdict {
  return { status: 'warn', message };
}

/** Fail with the problems found, or pass with `ok` when there are none. */
export function judge(problems: string[], ok: string): Verdict {
  return problems.length > 0 ? { status: 'fail', message: problems.join('; ') } : pass(ok);
}

/** A JSON CLI payload. */
export function payload(value: unknown): string {
  return JSON.stringify(value);
}

/** A key no tool declares. */
export const UNKNOWN_KEY = '__twylt_check_unknown__';

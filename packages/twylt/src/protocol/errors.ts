/**
 * Error objects of the protocol. A run fails by throwing a TwyltError; exactly one place
 * (the run loop's edge) turns it into text and an exit code.
 */
import { EXIT, type ExitCode } from './constants.js';
import type { Issue } from './issues.js';

export type ErrorType = 'validation_error' | 'protocol_error' | 'execution_error' | 'guardrails_error';
export type ErrorSource = 'twylt' | 'tool';
export type Stage = 'input' | 'output' | 'transport' | 'describe' | 'biz' | 'guardrails';

/** The wire shape of `{"error": ...}`; key order is part of the protocol. */
export interface ErrorObject {
  type: ErrorType;
  source: ErrorSource;
  stage: Stage;
  message: string;
  errors?: Issue[];
  exception?: { type: string; message: string };
  code?: string;
  incident_id?: string;
  original_code?: string;
  traceback?: string;
}

interface Kind {
  type: ErrorType;
  source: ErrorSource;
  stage: Stage;
  message: string;
  exit: ExitCode;
}

/** The six failure kinds of the protocol (docs/TWYLT.md section 3). */
export const KINDS = {
  inputInvalid: { type: 'validation_error', source: 'twylt', stage: 'input', message: 'Input validation failed', exit: EXIT.inputInvalid },
  outputInvalid: { type: 'validation_error', source: 'twylt', stage: 'output', message: 'Output validation failed', exit: EXIT.outputInvalid },
  transport: { type: 'protocol_error', source: 'twylt', stage: 'transport', message: 'Failed to read or parse input', exit: EXIT.protocol },
  describe: { type: 'protocol_error', source: 'twylt', stage: 'describe', message: 'Failed to process describe request', exit: EXIT.protocol },
  execution: { type: 'execution_error', source: 'tool', stage: 'biz', message: 'Tool execution failed', exit: EXIT.execution },
  guardrailsTransport: { type: 'guardrails_error', source: 'twylt', stage: 'transport', message: 'Transport policy denied', exit: EXIT.guardrails },
  guardrails: { type: 'guardrails_error', source: 'twylt', stage: 'guardrails', message: 'Policy denied', exit: EXIT.guardrails },
} as const satisfies Record<string, Kind>;
export type KindName = keyof typeof KINDS;

export interface TwyltErrorDetails {
  /** Validation issues (validation errors only). */
  issues?: Issue[];
  /** What went wrong underneath: becomes `exception`. */
  cause?: unknown;
  /** Guardrails deny code and incident id. */
  code?: string;
  incidentId?: string;
  originalCode?: string;
}

export class TwyltError extends Error {
  readonly kind: KindName;
  readonly issues?: Issue[];
  readonly code?: string;
  readonly incidentId?: string;
  readonly originalCode?: string;

  constructor(kind: KindName, details: TwyltErrorDetails = {}) {
    super(KINDS[kind].message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TwyltError';
    this.kind = kind;
    this.issues = details.issues;
    this.code = details.code;
    this.incidentId = details.incidentId;
    this.originalCode = details.originalCode;
  }

  get exitCode(): ExitCode {
    return KINDS[this.kind].exit;
  }

  /** The wire object, keys in protocol order. */
  toObject(debug = false): ErrorObject {
    const kind = KINDS[this.kind];
    const out: ErrorObject = { type: kind.type, source: kind.source, stage: kind.stage, message: kind.message };
    if (kind.type === 'validation_error') out.errors = this.issues ?? [];
    else out.exception = describeException(this.cause);
    if (this.code !== undefined) out.code = this.code;
    if (this.incidentId !== undefined) out.incident_id = this.incidentId;
    if (this.originalCode !== undefined) out.original_code = this.originalCode;
    if (debug) out.traceback = traceback(this.cause ?? this);
    return out;
  }
}

/** `{type, message}` for anything thrown, including non-Errors and hostile objects. */
export function describeException(thrown: unknown): { type: string; message: string } {
  return { type: attempt(() => exceptionType(thrown), 'Unknown'), message: attempt(() => exceptionMessage(thrown), '') };
}

function exceptionType(thrown: unknown): string {
  if (thrown === null || thrown === undefined) return String(thrown);
  if (typeof thrown !== 'object' && typeof thrown !== 'function') return typeof thrown;
  if (thrown instanceof Error && typeof thrown.name === 'string' && thrown.name) return thrown.name;
  const name = (thrown as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name ? name : 'Object';
}

function exceptionMessage(thrown: unknown): string {
  if (thrown === null || thrown === undefined) return '';
  if (typeof thrown === 'object') {
    const message = (thrown as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    if (thrown instanceof Error) return '';
  }
  return safeString(thrown);
}

/** Business code may throw objects whose getters or toString throw: never let that escape. */
function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : String(value);
  } catch {
    return '';
  }
}

function traceback(thrown: unknown): string {
  try {
    if (thrown instanceof Error && typeof thrown.stack === 'string') return thrown.stack;
  } catch {
    // a hostile getter: fall through
  }
  return safeString(thrown);
}

/**
 * A named cause for protocol failures: its name becomes `exception.type` on the wire, so
 * consumers see what went wrong without implementation class names.
 */
export class Fault extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/**
 * Transport faults (exit 4) caused by what the input says, not by how it was sent: a caller
 * that changes its input (an integer beyond 2^53 sent as a string, less nesting, a smaller
 * payload) can succeed. Consumers report them as invalid input, not as a broken tool.
 */
export const INPUT_FAULTS = {
  inexactInteger: 'InexactInteger',
  numberOutOfRange: 'NumberOutOfRange',
  tooDeep: 'InputTooDeep',
  tooLarge: 'InputTooLarge',
} as const;

const INPUT_FAULT_TYPES: ReadonlySet<string> = new Set(Object.values(INPUT_FAULTS));

/** Whether an exception type on the wire is one of INPUT_FAULTS. */
export function isInputFault(type: string | undefined): boolean {
  return type !== undefined && INPUT_FAULT_TYPES.has(type);
}

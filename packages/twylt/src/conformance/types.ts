/** The report of a conformance run: one result per check, each with its evidence. */

export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip';

/** One run of the tool: what the checker sent and what came back. */
export interface Evidence {
  sent: {
    /** Arguments after the tool's own command. */
    args: string[];
    stdin?: string;
    env?: Record<string, string>;
    /** Files placed in the (fresh, empty) working directory before the run. */
    files?: Record<string, string>;
  };
  received: {
    exitCode: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
    /** Files read back after the run; null when absent. */
    files?: Record<string, string | null>;
    /** Set when the run itself failed: time-out, output too large, could not start. */
    failure?: string;
    /** The process could not be started at all (not found, not executable). */
    notStarted?: true;
  };
  durationMs: number;
}

export interface CheckResult {
  /** Stable name, e.g. `describe.schema.env`, `input.unknown_field`. */
  id: string;
  title: string;
  status: CheckStatus;
  /** Why it passed, failed, warned or was skipped. */
  message: string;
  evidence: Evidence[];
}

export interface ConformanceReport {
  command: string[];
  /** Name and version from the tool's json_spec, when it could be read. */
  tool?: { name: string; version: string };
  /** The directory in which each run got its own fresh, empty working directory (removed afterwards). */
  runDirectory: string;
  /**
   * Set when the command did not start a TWYLT tool at all (not found, not executable, or it
   * exited before saying anything in TWYLT): the suite stopped after json_spec, which says why.
   */
  startFailure?: string;
  results: CheckResult[];
  summary: Record<CheckStatus, number>;
  /** True when no check failed. */
  ok: boolean;
  durationMs: number;
}

/**
 * The suite's own defaults, read by checkTool and printed by `twylt check --help`: a run
 * asks one small thing of the tool, so its time-out is half a served call's.
 */
export const CHECK_DEFAULTS = Object.freeze({ timeoutMs: 15_000, concurrency: 4 });

export interface ConformanceOptions {
  /** Per-run time-out (default CHECK_DEFAULTS.timeoutMs). */
  timeoutMs?: number;
  /** Runs in flight at once (default CHECK_DEFAULTS.concurrency). */
  concurrency?: number;
  /**
   * Where the command is typed (default: the current directory). Relative file arguments are
   * resolved from here, and each run's fresh directory is made inside a temporary
   * `.twylt-check-*` directory here, so that a command that finds things through its working
   * directory (`npx tsx`, `node --import tsx`, `uv run`, a tsconfig.json) finds them as it
   * does where the user stands. When it is not writable, the OS temp dir is used.
   */
  cwd?: string;
  /** Make the fresh working directories here instead (the OS temp dir, for instance). */
  tmpRoot?: string;
  /** Added to the environment of every run. */
  env?: Record<string, string>;
  /** Limit for stdout and for stderr of each run (default 4 MiB). */
  maxOutputBytes?: number;
  /**
   * Make arguments that name existing files relative to `cwd` absolute, since every run
   * happens in a fresh directory of its own (default true).
   */
  resolvePaths?: boolean;
  /** Run only checks whose id starts with one of these prefixes. */
  only?: string[];
  signal?: AbortSignal;
  /** Called as each check ends: its id, how many have ended, of how many (json_spec first). */
  onCheck?: (id: string, finished: number, total: number) => void;
  /** Run every probe in this sandbox (twylt/toolset's prepareSandbox; docs/sandbox.md). */
  sandbox?: import('../client/spawn.js').SpawnSandbox;
}

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
  results: CheckResult[];
  summary: Record<CheckStatus, number>;
  /** True when no check failed. */
  ok: boolean;
  durationMs: number;
}

export interface ConformanceOptions {
  /** Per-run time-out (default 15 000 ms). */
  timeoutMs?: number;
  /** Runs in flight at once (default 4). */
  concurrency?: number;
  /** Where the fresh working directories are created (default: the OS temp dir). */
  tmpRoot?: string;
  /** Added to the environment of every run. */
  env?: Record<string, string>;
  /** Limit for stdout and for stderr of each run (default 4 MiB). */
  maxOutputBytes?: number;
  /**
   * Make arguments that name existing files relative to the current directory absolute,
   * since every run happens in a fresh temporary directory (default true).
   */
  resolvePaths?: boolean;
  /** Run only checks whose id starts with one of these prefixes. */
  only?: string[];
  signal?: AbortSignal;
}

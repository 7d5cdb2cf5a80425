/**
 * The bridge's own defaults, light: the modules that use them (http.ts, server.ts, retry.ts,
 * exact-stdio.ts) and the help that prints them (args.ts) read them here, so that
 * `twylt-mcp --help` loads none of those modules and cannot print another number.
 */

/** The wait before a left-out tool is first described again (`--describe-retry-ms`). */
export const DEFAULT_RETRY_MS = 5000;

/** The longest wait between two retries of one tool. */
export const MAX_RETRY_MS = 5 * 60_000;

/** Calls that may wait for a free slot, beyond those running (`--max-queue`). */
export const DEFAULT_MAX_QUEUE = 100;

/** The largest message read, in bytes: the SDK's own limit for one buffered message. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The SDK's own default: a tool's input above it must come another way. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Below Kubernetes' default 30 s termination grace, so the bridge gets to kill its tools. */
export const DEFAULT_GRACE_MS = 25_000;

/**
 * Progress of a long command, for a person at a terminal: one status line on stderr,
 * rewritten in place (`\r`, erase line) and erased when the command ends, so that the
 * report that follows stands alone. Nothing at all unless stderr is a terminal, and nothing
 * with --json: a pipe, a log file or a program reading the JSON sees exactly what it did.
 * On a terminal that cannot erase (TERM=dumb), each step is a line of its own.
 * What each command reports is worded here: `twylt check`, `twylt scan`, `twylt build`.
 */
import type { ScanEvent } from '../toolset/catalog/scan.js';
import type { Io } from './command.js';

export interface Progress {
  /** Show `text` as the current step. */
  show(text: string): void;
  /** Erase the status line: the command's own output follows. */
  end(): void;
}

const SILENT: Progress = { show() {}, end() {} };

/** The status line of `command` on `io.stderr`; silent when stderr is no terminal or `json` is asked for. */
export function progressFor(io: Io, command: string, json: boolean | undefined): Progress {
  const stream = io.stderr as Io['stderr'] & { columns?: number };
  if (!stream.isTTY || json) return SILENT;
  if (io.env.TERM === 'dumb') return { show: (text) => stream.write(`twylt ${command}: ${text}\n`), end() {} };
  let shown = false;
  return {
    show(text) {
      // One line only: a wrapped line could not be rewritten in place.
      const width = Math.max(20, (stream.columns || 80) - 1);
      const line = `twylt ${command}: ${text}`;
      stream.write(`\r\x1b[K${line.length > width ? `${line.slice(0, width - 3)}...` : line}`);
      shown = true;
    },
    end() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

/** `twylt check`: which check ended last, and how many of how many have. */
export function checkProgress(progress: Progress) {
  progress.show('json_spec (starting the tool)');
  return (id: string, finished: number, total: number) => progress.show(`${finished} of ${total} checks done (${id})`);
}

/** `twylt scan`: how many tools of how many are done, the install in progress named. */
export function scanProgress(progress: Progress) {
  progress.show('finding tools');
  let done = 0;
  let total = 0;
  return (event: ScanEvent) => {
    if (event.kind === 'found') total = event.total;
    if (event.kind === 'judged') done = event.finished;
    if (event.kind === 'installing') progress.show(`${done} of ${total} tools done; installing ${event.installer} requirements for ${event.source}`);
    else progress.show(`${done} of ${total} tools done${event.kind === 'judged' ? ` (${event.source})` : ''}`);
  };
}

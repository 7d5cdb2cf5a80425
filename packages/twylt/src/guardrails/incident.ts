/**
 * Incident records: one compact JSON line per denial, appended (and fsync'ed) to the
 * incident log, or written to stderr. A log that cannot take the record fails closed.
 */
import { closeSync, constants, fstatSync, fsyncSync, lstatSync, openSync, writeSync, type Stats } from 'node:fs';
import type { Writable } from 'node:stream';
import { INCIDENT_EVENT, INCIDENT_SCHEMA_VERSION, REQUESTED_PATH_LIMIT, type DenyCode } from './codes.js';

export interface Incident {
  event: typeof INCIDENT_EVENT;
  schema_version: typeof INCIDENT_SCHEMA_VERSION;
  timestamp: string;
  incident_id: string;
  tool: string;
  pid: number;
  action: 'deny';
  code: DenyCode;
  requested_path?: string;
  original_code?: DenyCode;
}

export interface IncidentSink {
  tool: string;
  stderr: Writable;
  /** An absolute, checked log path; null means stderr. */
  log: string | null;
}

/** Records the denial and returns the record as written (its code may have become incident_log_unavailable). */
export function recordIncident(sink: IncidentSink, code: DenyCode, requestedPath?: string): Incident {
  const incident: Incident = {
    event: INCIDENT_EVENT,
    schema_version: INCIDENT_SCHEMA_VERSION,
    // ISO 8601 in UTC with an explicit offset, which every ISO parser (Python's included) reads.
    timestamp: new Date().toISOString().replace('Z', '+00:00'),
    // The global Web Crypto object: no node:crypto import on a tool's start-up path.
    incident_id: crypto.randomUUID(),
    tool: sink.tool,
    pid: process.pid,
    action: 'deny',
    code,
  };
  if (requestedPath !== undefined) incident.requested_path = Array.from(requestedPath).slice(0, REQUESTED_PATH_LIMIT).join('');
  if (sink.log === null) {
    sink.stderr.write(incidentLine(incident));
    return incident;
  }
  try {
    appendToLog(sink.log, incidentLine(incident));
  } catch {
    incident.code = 'incident_log_unavailable';
    incident.original_code = code;
    sink.stderr.write(incidentLine(incident));
  }
  return incident;
}

/** One line of ASCII JSON: nothing in a path can break the line or the log's encoding. */
function incidentLine(incident: Incident): string {
  const json = JSON.stringify(incident).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${json}\n`;
}

/** Opens the log for appending, refusing links, hard links and anything but a regular file. Throws when unusable. */
export function openLog(path: string): number {
  let existing: Stats | undefined;
  try {
    existing = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing) assertPlainFile(existing);
  // O_NOFOLLOW and O_NONBLOCK close the gap between the lstat above and the open (a link or a FIFO swapped in).
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const fd = openSync(path, flags, 0o600);
  try {
    assertPlainFile(fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function assertPlainFile(stats: Stats): void {
  if (!stats.isFile() || stats.nlink !== 1) throw new Error('the incident log is not a plain file');
}

function appendToLog(path: string, line: string): void {
  const fd = openLog(path);
  try {
    const bytes = Buffer.from(line, 'utf8');
    if (writeSync(fd, bytes) !== bytes.length) throw new Error('short write to the incident log');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

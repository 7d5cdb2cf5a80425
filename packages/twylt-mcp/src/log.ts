/** stdout carries the MCP protocol, so everything meant for people goes to stderr. */
export type Log = (message: string) => void;

/** Every line carries the prefix, so that a multi-line entry stays ours among a client's logs. */
export const stderrLog: Log = (message) => {
  const lines = message.replace(/\r?\n$/, '').split(/\r?\n/);
  process.stderr.write(lines.map((line) => `twylt-mcp: ${line}\n`).join(''));
};

/**
 * A served HTTP bridge logs for machines: one JSON object per line, `time` and `event`
 * first. See docs/mcp.md for the events and their fields.
 */
export type EventLog = (event: string, fields?: Record<string, unknown>) => void;

export const stderrEventLog: EventLog = (event, fields = {}) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`);
};

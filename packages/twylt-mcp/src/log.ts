/** stdout carries the MCP protocol, so everything meant for people goes to stderr. */
export type Log = (message: string) => void;

export const stderrLog: Log = (message) => {
  process.stderr.write(`twylt-mcp: ${message}\n`);
};

/**
 * A served HTTP bridge logs for machines: one JSON object per line, `time` and `event`
 * first. See docs/mcp.md for the events and their fields.
 */
export type EventLog = (event: string, fields?: Record<string, unknown>) => void;

export const stderrEventLog: EventLog = (event, fields = {}) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`);
};

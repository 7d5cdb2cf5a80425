/** stdout carries the MCP protocol, so everything meant for people goes to stderr. */
export type Log = (message: string) => void;

export const stderrLog: Log = (message) => {
  process.stderr.write(`twylt-mcp: ${message}\n`);
};

/**
 * How the snapshot build (snapshot.ts, inside Node's snapshot builder) tells the builder
 * (executable.ts) why it refused a tool: one line on its stderr, this prefix and a JSON string.
 */
export const REFUSED = 'twylt-snapshot-refused:';

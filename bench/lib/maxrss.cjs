// Preloaded (node --require) into every benchmarked process, tools and floors alike: on exit
// it writes the process's peak resident set size in KiB to fd 3, which the bench opened as a
// pipe. Node has no way to read a child's rusage, and /usr/bin/time is not on a fresh machine.
'use strict';
const { writeSync } = require('node:fs');

process.on('exit', () => {
  try {
    writeSync(3, String(process.resourceUsage().maxRSS));
  } catch {
    // fd 3 is not ours to write: not run by the bench
  }
});

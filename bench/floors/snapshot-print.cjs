// A startup snapshot whose main function prints the echo result: made into a single
// executable (the floor of `twylt build --executable`) and into a blob for
// `node --snapshot-blob` (the floor of `--snapshot-blob`). What a tool's snapshot costs
// beyond it is its heap and its run.
'use strict';
const { startupSnapshot } = require('node:v8');

startupSnapshot.setDeserializeMainFunction(() => {
  process.stdout.write(`${JSON.stringify({ text: 'hello' }, null, 2)}\n`);
});

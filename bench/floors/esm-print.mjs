// Bare node running an ES module file that prints the echo result: node -e plus the cost of
// Node's ES module loader, which every ESM tool (a built single file included) pays.
process.stdout.write(`${JSON.stringify({ text: 'hello' }, null, 2)}\n`);

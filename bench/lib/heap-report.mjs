// Preloaded into the bridge by bench/soak.mjs (node --import): answers 'sample' over the IPC
// channel with the process's heap and RSS, after a full GC when --expose-gc allows one, so
// that the soak reads what is live, not what is garbage. It never keeps the bridge alive.
if (process.send) {
  process.on('message', (message) => {
    if (message !== 'sample') return;
    globalThis.gc?.();
    const { heapUsed, rss } = process.memoryUsage();
    process.send({ heapUsed, rss });
  });
  process.channel?.unref();
}

/** The page's entry point (bundled by scripts/build.mjs into dist/inspect/ui/app.js). */
import { render } from 'preact';
import { App } from './App.js';

// The token came in the address once, and the cookie carries it now: keep it off the screen and out of the history.
if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', location.pathname + location.hash);

render(<App />, document.getElementById('app')!);

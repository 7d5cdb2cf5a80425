/** The page's entry point (bundled by scripts/build.mjs into dist/inspect/ui/app.js). */
import { render } from 'preact';
import { TOKEN_FRAGMENT } from '../types.js';
import { App } from './App.js';
import { keepToken } from './api.js';

// The token comes in the link's fragment, which no server ever receives: keep it for this
// tab, and keep it off the screen and out of the history.
const token = new URLSearchParams(location.hash.slice(1)).get(TOKEN_FRAGMENT);
if (token !== null) {
  keepToken(token);
  history.replaceState(null, '', location.pathname + location.search);
}

render(<App />, document.getElementById('app')!);

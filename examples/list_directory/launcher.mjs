// Runs tool.ts so that `requirements` and `json_spec` answer even before its dependencies are installed.
import { runToolFile } from 'twylt/bootstrap';
await runToolFile(new URL('./tool.ts', import.meta.url));

/**
 * What a built single file (`twylt build`) runs first. A describe request is answered from
 * the json_spec embedded at build time before the tool module, and so its schema library,
 * is even evaluated. Anything else goes to the tool's own run, with stdin handed over if it
 * was read here. The steps mirror the run loop's first ones, using its own functions.
 */
import { describeRequest, describeSpecText } from '../tool/describe.js';
import { embedSpec, handOverRequest, replayStdin, type JsonSpec } from '../tool/hooks.js';
import { scanOptions, serviceOption } from '../tool/options.js';
import { guardProcess } from '../tool/tool.js';
import { isCliPayload, processStdin, readRequest, readStdin } from '../tool/transport.js';

/** `spec` is undefined only while the builder itself asks the tool for its json_spec. */
export async function runBuilt(spec: JsonSpec | undefined, loadTool: () => Promise<unknown>): Promise<void> {
  guardProcess();
  if (spec) {
    embedSpec(spec);
    const answer = await describeFromSpec(spec);
    if (answer !== undefined) {
      process.stdout.write(answer, () => process.exit(0));
      return;
    }
  }
  await loadTool();
}

/**
 * The describe answer, or undefined when this run is anything else (errors included). Then
 * the tool's run gets the parsed request, or the stdin bytes to parse and report itself.
 */
async function describeFromSpec(spec: JsonSpec): Promise<string | undefined> {
  const options = scanOptions(process.argv.slice(2), process.env);
  if (options.invalid || serviceOption(options.rest[0])) return undefined;
  const bytes = isCliPayload(options.rest[0]) ? null : await readStdin(processStdin, options.maxInputBytes);
  const replay = () => {
    if (bytes !== null) replayStdin(bytes);
  };
  replay();
  try {
    const request = await readRequest(options.rest, processStdin, options.maxInputBytes);
    const mode = describeRequest(request, process.env);
    if (mode) return describeSpecText(spec, mode);
    if (request) handOverRequest(request);
    else replay();
  } catch {
    // Malformed input: the tool's own run reports it, exactly as the unbuilt tool would.
    replay();
  }
  return undefined;
}

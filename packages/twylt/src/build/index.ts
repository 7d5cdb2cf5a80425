export { buildTool, BuildError, type BuildOptions, type BuildResult } from './build.js';

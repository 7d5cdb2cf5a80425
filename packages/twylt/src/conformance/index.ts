/**
 * twylt/conformance: a black-box check of any executable against TWYLT 1.8.
 *
 *   const report = await checkTool(['python3', 'tool.py']);
 *   if (!report.ok) console.log(renderTable(report));
 */
export { checkTool, CHECK_GROUPS } from './suite.js';
export { renderJunit, renderTable } from './format.js';
export type { TableOptions } from './format.js';
export { CHECK_DEFAULTS } from './types.js';
export type { CheckResult, CheckStatus, ConformanceOptions, ConformanceReport, Evidence } from './types.js';

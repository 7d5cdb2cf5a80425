/**
 * `twylt/bootstrap`: run a tool file so that it can describe itself before its dependencies
 * are installed. Light by design: the parser loads only for a static answer, the tool runtime
 * only with the tool.
 */
export { runToolFile } from './run-tool-file.js';
export { readToolMetadata, extractMetadata, METADATA_FIELDS, type MetadataField, type StaticMetadata } from './extract.js';
export { defaultRequirements, markToolEntryFile, toolEntryFile } from '../requirements/default-requirements.js';

/**
 * Static reading of a tool's metadata from its source, without running it. The parser
 * (@babel/parser) is loaded on first use only, so importing this module costs nothing.
 */
import { readFile } from 'node:fs/promises';
import type * as t from '@babel/types';
import type { MetadataField } from './fields.js';
import { findTool, type Note } from './find-tool.js';
import { literalValue } from './literal.js';

export { METADATA_FIELDS, type MetadataField } from './fields.js';

export interface StaticMetadata {
  /** Whether a tool was found in the source. */
  found: boolean;
  /** The fields written as literals, as the source gives them (not checked for shape). */
  values: Partial<Record<MetadataField, unknown>>;
  /** Fields the tool declares in a form that is not a literal: their value is unknown. */
  unreadable: Set<MetadataField>;
  /** Human-readable lines on what could not be read, `file:line:column: message`. */
  notes: string[];
}

const TYPESCRIPT = /\.[mc]?ts$/i;
/** Syntax Node 20 or TypeScript 5 accept beyond the parser's defaults. */
const SYNTAX = ['decorators', 'decoratorAutoAccessors', 'deprecatedImportAssert'] as const;

/** Reads and parses the tool file. Throws only when the file cannot be read. */
export async function readToolMetadata(file: string): Promise<StaticMetadata> {
  return extractMetadata(await readFile(file, 'utf8'), file);
}

/**
 * The tool's metadata from its source text. `.ts`, `.mts` and `.cts` files are parsed as
 * TypeScript, anything else as JavaScript. A source the parser rejects yields no tool and a
 * note (the tool may still load, e.g. with syntax newer than the parser).
 */
export async function extractMetadata(source: string, file: string): Promise<StaticMetadata> {
  const metadata: StaticMetadata = { found: false, values: {}, unreadable: new Set(), notes: [] };
  const where = (node: t.Node) => `${file}:${node.loc ? `${node.loc.start.line}:${node.loc.start.column + 1}` : '?'}`;

  const { parse } = await import('@babel/parser');
  let program: t.Program;
  try {
    program = parse(source, {
      sourceType: 'module',
      sourceFilename: file,
      attachComment: false,
      plugins: TYPESCRIPT.test(file) ? ['typescript', ...SYNTAX] : [...SYNTAX],
    }).program;
  } catch (error) {
    metadata.notes.push(`${file}: cannot be parsed, so no metadata is read: ${(error as Error).message}`);
    return metadata;
  }

  const notes: Note[] = [];
  const tool = findTool(program, notes);
  if (!tool) {
    notes.push({ node: program, message: "no tool found: no class extends Tool from 'twylt' and no defineTool(...) call" });
  } else {
    metadata.found = true;
    for (const [field, node] of tool.fields) {
      const result = node === null ? undefined : literalValue(node);
      if (result?.ok) {
        metadata.values[field] = result.value;
      } else {
        metadata.unreadable.add(field);
        if (result) notes.push({ node: result.node, message: `${field} of ${tool.label} is not a literal (${result.why})` });
      }
    }
  }
  metadata.notes.push(...notes.map((note) => `${where(note.node)}: ${note.message}`));
  return metadata;
}

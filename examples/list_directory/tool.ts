import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Tool } from 'twylt';
import { workspace } from 'twylt/guardrails';

const ListDirectoryInput = z.object({
  path: z
    .string()
    .describe('Directory to list: inside the workspace when guardrails are on (`/` is its root), else relative to the working directory or absolute'),
});

const Entry = z.object({
  name: z.string().describe('Entry name, without its directory'),
  is_dir: z.boolean().describe('True for a directory'),
});

const ListDirectoryOutput = z.object({
  entries: z.array(Entry).describe('The directory entries, sorted by name'),
});

class ListDirectory extends Tool<typeof ListDirectoryInput, typeof ListDirectoryOutput> {
  inputSchema = ListDirectoryInput;
  outputSchema = ListDirectoryOutput;
  name = 'list_directory';
  version = '1.0.0';
  description = 'List the entries of a directory, sorted by name, marking which are directories.';
  inputSchemaName = 'ListDirectoryInput';
  inputSchemaVersion = '1.0.0';
  outputSchemaName = 'ListDirectoryOutput';
  outputSchemaVersion = '1.0.0';
  requirements = {
    tool: 'npm',
    format: 'package.json',
    content: '{"dependencies":{"twylt":"^0.1.0","zod":"^4.0.0"}}',
  };
  fewShots = [
    {
      input: { path: '.' },
      output: { entries: [{ name: 'notes.txt', is_dir: false }, { name: 'src', is_dir: true }] },
    },
  ];

  async biz({ path }: z.infer<typeof ListDirectoryInput>) {
    // With guardrails on, resolve() confines the path to the workspace and inspect() refuses
    // links and special files before stat() could follow them; with guardrails off both
    // resolve relative to the working directory and deny nothing.
    const ws = workspace();
    const dir = ws.resolve(path);
    const names = (await readdir(dir)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const entries = [];
    for (const name of names) {
      const child = ws.inspect(join(dir, name));
      entries.push({ name, is_dir: await stat(child).then((s) => s.isDirectory(), () => false) });
    }
    return { entries };
  }
}

ListDirectory.run();

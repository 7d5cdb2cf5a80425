import { readdir } from 'node:fs/promises';
import { z } from 'zod';
import { Tool } from 'twylt';

const ListDirectoryInput = z.object({
  path: z.string().min(1).describe('Directory to list, relative to the working directory or absolute'),
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
    const dirents = await readdir(path, { withFileTypes: true });
    const entries = dirents
      .map((entry) => ({ name: entry.name, is_dir: entry.isDirectory() }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { entries };
  }
}

ListDirectory.run();

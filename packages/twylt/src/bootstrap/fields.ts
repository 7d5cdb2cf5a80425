/** The metadata fields of a tool that static reading looks for, as named in code. */
export const METADATA_FIELDS = [
  'name',
  'version',
  'description',
  'requirements',
  'fewShots',
  'inputSchemaName',
  'inputSchemaVersion',
  'outputSchemaName',
  'outputSchemaVersion',
] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

export function isMetadataField(key: string | undefined): key is MetadataField {
  return (METADATA_FIELDS as readonly (string | undefined)[]).includes(key);
}

/**
 * TWYLT's JSON text is UTF-8, strictly, on both sides of a run: a malformed byte is an
 * error, never a silent U+FFFD. A byte order mark is kept, so JSON.parse refuses it.
 */
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text `bytes` hold, or undefined when they are not valid UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

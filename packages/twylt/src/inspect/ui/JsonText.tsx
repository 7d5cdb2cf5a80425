/** JSON text drawn with its keys, strings, numbers and literals told apart; the text itself is unchanged. */
const TOKEN = /("(?:[^"\\\n]|\\.)*")(\s*:)?|(-?\d[\d.eE+-]*)|\b(true|false|null)\b/g;

export function JsonText({ text, label }: { text: string; label?: string }) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    const [whole, string, colon, number, literal] = match;
    if (string !== undefined) {
      parts.push(<span class={colon ? 'j-key' : 'j-string'}>{string}</span>);
      if (colon) parts.push(colon);
    } else if (number !== undefined) parts.push(<span class="j-number">{number}</span>);
    else if (literal !== undefined) parts.push(<span class="j-literal">{literal}</span>);
    last = match.index + whole.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return (
    <pre class="json-text" aria-label={label} tabIndex={0}>
      {parts}
    </pre>
  );
}

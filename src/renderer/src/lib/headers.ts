/**
 * Header overrides typed in the replay panel, one `Name: value` per line. Returns the headers
 * and, per bad line, a message naming it, so nothing typed is silently dropped.
 */
export function parseHeaderLines(text: string): { headers: Record<string, string>; errors: string[] } {
  const headers: Record<string, string> = {};
  const errors: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      errors.push(`line ${index + 1}: expected "Name: value"`);
      return;
    }
    headers[name.toLowerCase()] = line.slice(colon + 1).trim();
  });
  return { headers, errors };
}

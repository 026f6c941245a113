/**
 * Decoded form fields of an application/x-www-form-urlencoded body (Slack slash commands and
 * interactivity, Twilio). Slack's interactive payloads put JSON in a `payload` field; the UI
 * shows that one as a tree.
 */

export interface FormField {
  name: string;
  value: string;
  /** The value parsed as JSON when it is an object or array. */
  json?: unknown;
}

export function isFormContentType(contentType: string | null | undefined): boolean {
  return /^application\/x-www-form-urlencoded\b/i.test(contentType ?? '');
}

/** Fields of a form body, or null when the text is not one (e.g. it is JSON). */
export function decodeFormBody(text: string): FormField[] | null {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.startsWith('{') || trimmed.startsWith('[') || !trimmed.includes('=')) return null;
  if (/\s/.test(trimmed)) return null;
  const fields: FormField[] = [];
  for (const [name, value] of new URLSearchParams(trimmed)) {
    const field: FormField = { name, value };
    const start = value.trimStart()[0];
    if (start === '{' || start === '[') {
      try {
        field.json = JSON.parse(value);
      } catch {
        // not JSON after all; shown as text
      }
    }
    fields.push(field);
  }
  return fields;
}

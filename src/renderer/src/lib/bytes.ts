/** Payload bytes as the UI sees them: EventDetail carries text (utf8) or base64. */

export type PayloadEncoding = 'utf8' | 'base64';

export function payloadBytes(payload: string, encoding: PayloadEncoding): Uint8Array {
  if (encoding === 'utf8') return new TextEncoder().encode(payload);
  const binary = atob(payload);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(size < 10 * 1024 ? 1 : 0)} KB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Text that came from outside (event types, payloads, headers, hints, a handler's answer, a
 * server's error message) on its way to a terminal (DESIGN §13, #22.6). A sender must never move
 * the cursor, erase lines, forge a line or retitle the window: every C0 control character
 * (U+0000–U+001F), DEL (U+007F) and C1 control character (U+0080–U+009F, e.g. the one-character
 * CSI U+009B) is shown escaped as `\x1b`. Idempotent (the result holds no control character).
 * `--json` output never goes through here: JSON escaping already covers it.
 */

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const escape = (char: string) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** One line: every control character escaped, newlines and tabs too. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, escape);
}

/** A block (a pretty-printed payload, a multi-line message): newlines and tabs kept, the rest escaped. */
export function terminalSafeBlock(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT, escape);
}

/**
 * Text for a terminal. Run inputs, answers, tool arguments and error messages are anyone's to
 * write; printed raw, an ANSI or OSC escape in them could clear the screen, retitle the window
 * or hide what follows, and a bidi override could show `evil.exe` reversed as something else in
 * an `Approve …? [y/N]` question. Human output shows such characters as visible escapes instead.
 */

// C0 controls but tab and newline, DEL, the C1 controls (U+0080–U+009F: 8-bit CSI among them),
// and the bidi controls: ALM, LRM, RLM, the embeddings and overrides (U+202A–U+202E) and the
// isolates (U+2066–U+2069). Matching control characters is the point here.
/* eslint-disable no-control-regex */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/* eslint-enable no-control-regex */

function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\n') return '\\n';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with control and bidi characters shown as `\xNN` / `\uNNNN` (newlines kept, unless `oneLine`). */
export function terminalText(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine ? CONTROL_OR_NEWLINE : CONTROL, visible);
}

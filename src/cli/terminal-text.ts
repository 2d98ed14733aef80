/**
 * Text for a terminal. Run inputs, answers, tool arguments and error messages are anyone's to
 * write; printed raw, an ANSI or OSC escape in them could clear the screen, retitle the window
 * or hide what follows. Human output shows such characters as visible escapes instead.
 */

// C0 controls but tab and newline, DEL, and the C1 controls (U+0080–U+009F: 8-bit CSI among them).
// Matching control characters is the point here.
/* eslint-disable no-control-regex */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
/* eslint-enable no-control-regex */

function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\n') return '\\n';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : char;
}

/** `text` with control characters shown as `\xNN` (newlines kept, unless `oneLine`). */
export function terminalText(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine ? CONTROL_OR_NEWLINE : CONTROL, visible);
}

/** Passwords out of what the CLI prints: a PostgreSQL URL's password becomes `***`. */
import { isPostgresUrl } from '../store/index.js';

/** `scheme://user:password@` in any text, its password masked. */
const CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):[^\s@/]*@/gi;
/** A `password=` query parameter (libpq's and pg's other way to give one), its value masked. */
const PASSWORD_PARAM = /([?&]password=)[^\s&#]*/gi;

/** The passwords of the URLs among `values` (as written and decoded), longest first. */
function passwordsOf(values: readonly string[]): string[] {
  const found = new Set<string>();
  for (const value of values) {
    const inUser = /^[a-z][a-z0-9+.-]*:\/\/[^:/@]*:([^@/]+)@/i.exec(value.trim())?.[1];
    const inQuery = /[?&]password=([^&#\s]+)/i.exec(value)?.[1];
    for (const password of [inUser, inQuery]) {
      if (!password) continue;
      found.add(password);
      try {
        found.add(decodeURIComponent(password));
      } catch {
        // Not percent-encoded as it should be: the raw text is masked.
      }
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every URL's password masked, and the passwords of `urls` (the command line's) masked
 * wherever they appear, so a message quoting a password by itself does not print it either.
 */
export function maskCredentials(text: string, urls: readonly string[] = []): string {
  let masked = text.replace(CREDENTIALS, '$1:***@').replace(PASSWORD_PARAM, '$1***');
  for (const password of passwordsOf(urls)) {
    // As a word of its own: a password that is also a word of the message ('postgres') is masked
    // there too, never inside another word.
    const escaped = password.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    masked = masked.replace(new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`, 'g'), '***');
  }
  return masked;
}

/** A database as printed: a URL without its password. */
export function describeDatabase(database: string): string {
  if (!isPostgresUrl(database)) return database;
  if (!URL.canParse(database)) return maskCredentials(database, [database]);
  const url = new URL(database);
  if (url.password) url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.toString();
}

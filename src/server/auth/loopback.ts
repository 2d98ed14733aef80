/** Loopback addresses: where a server without tokens may listen, and the hosts dev mode answers. */
import { isIP } from 'node:net';

/** True for `localhost`, `127.0.0.0/8` and `::1`. */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** The host name of a `Host` header, without its port. */
export function hostOf(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

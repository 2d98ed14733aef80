/** Who is at the terminal, as approvals decided in process record it. */
import { userInfo } from 'node:os';

/** `cli:<os user>`: the decider recorded for approvals given in process. */
export function cliUser(): string {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
  return `cli:${name}`;
}

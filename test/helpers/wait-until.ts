/** Waiting on a condition (polled), never for a fixed time. */
import { scaled } from './limits.js';

/** Waits until `check` holds (a condition, polled), or fails saying what did not happen. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = scaled(60_000),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

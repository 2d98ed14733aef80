/** The exit codes of `baton`, the same for every command, so scripts can rely on them. */

/** Exit codes by meaning. */
export const EXIT = {
  /** The command did what it was asked; for `run`, the run succeeded. */
  ok: 0,
  /** The run failed, or the command could not do its job. */
  failed: 1,
  /** The command line was wrong. */
  usage: 2,
  /** The run is waiting for a human decision that was not given. */
  waiting: 3,
  /** The run or approval does not exist (or is not visible to the token). */
  notFound: 4,
  /** Interrupted with Ctrl-C (or SIGTERM) before the command finished. */
  interrupted: 130,
} as const;

/** The exit-status section of every command's `--help`. */
export const EXIT_HELP = `Exit status:
  0    success (for run and events --follow: the run succeeded)
  1    the run failed, or an error
  2    usage error
  3    the run is waiting for a human decision (none was given)
  4    run or approval not found
  130  interrupted`;

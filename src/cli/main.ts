#!/usr/bin/env node
/** The `baton` bin: runs the command line and exits with its code. */
import { runCli } from './run-cli.js';

process.exitCode = await runCli(process.argv.slice(2));

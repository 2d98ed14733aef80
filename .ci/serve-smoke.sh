#!/usr/bin/env bash
# The service from the built package, as a user starts it from a clone: `npm start` serves the
# demo agent on a fresh embedded file; `npm run baton -- run --url` follows a run live to its
# answer, with --json parsing.
set -euo pipefail
tmp=$(mktemp -d)
# In a process group of its own, stopped as a whole: npm's shell does not always pass SIGTERM on
# to the server, which then outlived this script (a `baton serve` left running after every CI).
trap 'kill -TERM -- "-$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
setsid npm start --silent -- --port 0 --db "$tmp/baton.db" --dir "$tmp/configs" > "$tmp/serve.log" 2>&1 &
pid=$!
url=''
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$tmp/serve.log" | head -n 1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/serve.log"; echo "npm start did not print its URL"; exit 1; }
node -e 'fetch(process.argv[1] + "/healthz").then((r) => { if (!r.ok) process.exit(1); })' "$url"
# The README's commands from a clone: `npm run baton --` (--silent keeps npm's lines out of the JSON).
npm run baton -- run "Archive the stale configs" --url "$url" --approve
npm run --silent baton -- run "Archive the stale configs" --url "$url" --approve --json > "$tmp/run.jsonl"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const parsed = lines.map((line) => JSON.parse(line));
  const last = parsed.at(-1);
  if (last.type !== "summary" || last.run.status !== "succeeded") throw new Error("run ended " + JSON.stringify(last));
  console.log("serve smoke: " + lines.length + " JSON lines, run " + last.run.status + ": " + last.run.answer);
' "$tmp/run.jsonl"
# SIGTERM to the whole group: the server exits 0, npm reports the signal itself (143).
kill -TERM -- "-$pid"
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || [ "$status" = 143 ] || { cat "$tmp/serve.log"; echo "serve exited $status"; exit 1; }
grep -q 'Listening on' "$tmp/serve.log"
echo "serve smoke: stopped cleanly"

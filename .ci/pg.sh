#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the tests, on loopback and a free port.
#   .ci/pg.sh start DIR [--durable]
#                         installs Debian's postgresql if initdb is missing, creates a cluster in
#                         DIR (under /tmp: the postgres user must read it) and starts it; prints
#                         the URL of its `postgres` database on stdout. Without --durable it runs
#                         with fsync=off (tests); --durable keeps PostgreSQL's defaults (benchmarks).
#   .ci/pg.sh stop DIR    stops it at once and removes DIR.
# initdb, pg_ctl and postgres refuse to run as root: they run as the `postgres` user.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory}
# The postgres user may not enter the caller's directory (a root-only temp dir): work from /.
cd /
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}
bin() {
  for d in /usr/local/bin /usr/lib/postgresql/15/bin; do
    if [ -x "$d/$1" ]; then echo "$d/$1"; return; fi
  done
  command -v "$1"
}
case "$cmd" in
  start)
    if [ -z "$(bin initdb 2> /dev/null)" ]; then
      sudo=''
      [ "$(id -u)" = 0 ] || sudo='sudo'
      $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
      DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq postgresql >&2
    fi
    mkdir -p "$dir"
    chown postgres "$dir" 2> /dev/null || sudo chown postgres "$dir"
    # A free port, never 5432.
    port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    as_postgres "$(bin initdb)" --no-sync -A trust -U postgres -D "$dir/data" > /dev/null
    # fsync=off: a test cluster (never for benchmarks or durability tests).
    fsync='-c fsync=off'
    [ "${3:-}" = --durable ] && fsync=''
    as_postgres "$(bin pg_ctl)" -w -D "$dir/data" -l "$dir/log" start \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $fsync -c max_connections=200" > /dev/null
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_postgres "$(bin pg_ctl)" -D "$dir/data" stop -m immediate > /dev/null || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac

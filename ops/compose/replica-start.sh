#!/bin/sh
# The hot standby: on first start, copy the primary with pg_basebackup -R (which writes
# primary_conninfo and standby.signal), then run PostgreSQL; it streams from `db` from then on.
set -e
PGDATA=/var/lib/postgresql/data
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_basebackup -h db -U replicator -D "$PGDATA" -R -X stream; do
    echo "waiting for the primary"; rm -rf "$PGDATA"; sleep 2
  done
  chmod 700 "$PGDATA"
fi
exec postgres -D "$PGDATA" -c hot_standby=on -c hot_standby_feedback=on

#!/bin/sh
# Runs once, when the primary's data directory is created (docker-entrypoint-initdb.d):
# pgvector in the database, a role for the replica, replication connections allowed.
set -e
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" <<SQL
CREATE EXTENSION IF NOT EXISTS vector;
CREATE ROLE replicator REPLICATION LOGIN PASSWORD '$REPLICATION_PASSWORD';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"

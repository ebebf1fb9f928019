"""Reads on a streaming replica, writes on the primary (DATABASE_REPLICA_URL).

With no replica configured none of this is installed and every query goes to "default".

With one, `DATABASE_ROUTERS` holds `PrimaryReplicaRouter` (routing.py) and the `replica` alias
exists:

- Reads go to the replica only inside an HTTP request (`RoutingScope`, an ASGI middleware in
  request_scope.py, marks it; REST, UI and MCP alike). Management commands, Celery jobs and
  migrations read and write the primary, so a job never reads something older than what it is
  about to write.
- Read-your-writes: the first write of a request pins its client (API token or browser session)
  to the primary for REPLICA_PIN_SECONDS, recorded in the `routing` cache that all web processes
  share, so the client's next requests, whichever process answers them, read the primary. A
  request also reads the primary after its own first write and inside any transaction on the
  primary. Bookkeeping writes (the search log, a missed search's query vector, a token's last
  use) do not pin.
- Faults: a server that fails is marked down in this process for a second (after a probe
  confirms it does not answer), and reads go to the other one: replica down -> the primary
  serves reads; primary down -> the replica serves reads and writes fail fast (503 with
  Retry-After) instead of waiting out the pool's timeout. A request whose read failed in flight
  (before it wrote anything) runs again on the other server (`ReplicaRetryMiddleware`, and the
  MCP runtime).

Raw SQL reads (the search pipeline's candidate queries) use `read_connection`, which follows
the same choice as the router's `db_for_read`.

One module per job, none importing a later one: state.py (the aliases and one request's
routing state), health.py (which server is up), pinning.py (read-your-writes), request_scope.py
(the ASGI middleware that starts a request's state), routing.py (the router and
`read_connection`), retry.py (a failed read runs again).
"""

"""The search pipeline's data layer: every SQL read a search runs, one module per job. Reads
go where the router sends them (the replica, when one is configured). The stage modules
around this package are plain Python over what these return."""

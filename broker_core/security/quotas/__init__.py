"""Client quotas as Kafka has them: byte rates for produce and fetch, and a share of request-handling time,
per user and/or client-id, enforced by throttling (``throttle_time_ms`` and a muted connection)."""

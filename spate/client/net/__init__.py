"""Talking to brokers: one connection, a cluster's connections with metadata, version choice, retries."""

"""SASL mechanisms (PLAIN, SCRAM-SHA-256/512) and the server-side authenticator."""

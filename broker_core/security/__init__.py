"""Security: TLS contexts, SASL authentication and the principals they establish.

Pure logic (principal mapping, JAAS parsing, the PLAIN and SCRAM exchanges,
the per-connection authenticator) lives here; the socket server wraps
connections with :mod:`broker_core.security.tls` and feeds SASL frames to
:class:`~broker_core.security.sasl.authenticator.SaslServerAuthenticator`.
"""

"""``spate console``: a small web console for a Spate (or any Kafka-protocol) cluster.

Server-rendered pages with a little JavaScript, served by the standard
library's HTTP server and talking to the cluster only through Spate's
client (:class:`spate.client.Admin` and :class:`spate.client.Consumer`).
Read-only mode hides every action and refuses it on the server too.
"""

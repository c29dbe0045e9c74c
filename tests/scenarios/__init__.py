"""Black-box tests: a real broker process driven by real third-party Kafka clients."""

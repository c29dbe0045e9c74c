"""The consumer: subscription state, the fetcher, group membership, heartbeats and committed offsets."""

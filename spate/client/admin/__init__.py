"""The admin client: topics, configs, records, groups and the cluster."""

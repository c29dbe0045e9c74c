"""Config resource types as DescribeConfigs and AlterConfigs number them."""

TOPIC = 2
BROKER = 4

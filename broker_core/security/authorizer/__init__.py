"""Authorization: Kafka's ACL model (:mod:`acl`), the ACLs every broker holds (:mod:`acl_cache`), the
decision (:mod:`authorizer`) and where ACLs are kept (:mod:`acl_store`: ZooKeeper or a file)."""

-- Run once by the official image's entrypoint when it creates the cluster.
CREATE EXTENSION IF NOT EXISTS abtree;
SELECT * FROM abtree_status();

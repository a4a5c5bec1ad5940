-- Run once by the official image's entrypoint on every node (coordinator and
-- workers) when it creates the cluster: Citus first, then abtree.
CREATE EXTENSION IF NOT EXISTS citus;
CREATE EXTENSION IF NOT EXISTS abtree;

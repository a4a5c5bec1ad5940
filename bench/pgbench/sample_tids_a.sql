-- :n weighted draws from an abtree index through abtree_sample_tids(), counting the TIDs
-- without reading the heap: the index's sampling descent alone (paper 000's sampling clients,
-- Fig. 14).  Set the index and n with -D index=a_y -D n=1000 (the index name is a parameter,
-- cast to regclass).
SELECT count(*) FROM abtree_sample_tids(:index, :n);

-- A point lookup of a key that P(id, k) almost surely lacks: the same hash of an id with
-- another seed (each lookup has about a rows/2^31 chance to hit). The case where a sealed
-- partition's Bloom filter saves the descent.
\set i random(1, :maxid)
SELECT id FROM p WHERE k = (hashint8extended(:i::int8, 2) & 2147483647)::int4;

-- One point lookup of an existing key in U(x, y) with y unique in 1..:rows.
\set k random(1, :rows)
SELECT x FROM u WHERE y = :k;

--
-- chll: text and binary I/O, and the validation of every byte of input.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS abtree;
RESET client_min_messages;

-- a hash in bucket b (of 2^log2m) with z leading zeros below the bucket bits
CREATE FUNCTION chll_t_hash(log2m int, b int, z int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
	SELECT (b::bigint << (64 - log2m)) | (1::bigint << (63 - log2m - z))
$$;
-- s with n occurrences of hash h
CREATE FUNCTION chll_t_add(s chll, h bigint, n int) RETURNS chll
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	FOR i IN 1..n LOOP
		s := chll_add_hash(s, h);
	END LOOP;
	RETURN s;
END $$;
-- the flat form of s in the text form's notation: the text form is packed
-- (src/hll/README, "Packed form"), decoded apart from the C code by
-- test/sql/chll_flat.sql (shared with bench/experiments/chll_storage.py)
\getenv abs_srcdir PG_ABS_SRCDIR
\set chll_flat_file :abs_srcdir '/test/sql/chll_flat.sql'
\i :chll_flat_file
CREATE FUNCTION chll_t_flat(s chll) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT '\x' || encode(chll_flat_bytes(s), 'hex') $$;
-- the flat form of s with the bytes from offset off replaced by hex
CREATE FUNCTION chll_t_patch(s chll, off int, hex text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT overlay(chll_t_flat(s) PLACING hex FROM 3 + 2 * off FOR length(hex))
$$;

-- Sketches with 16 buckets (728 bytes): header at 0, bucket b at 24 + 36 b
-- (a uint32 count, then 32 counter bytes), overflow entries at 600.
--   small: one value in bucket 3 with 2 leading zeros
--   heavy: that value 200 times, counted in overflow entry 0
--   two:   heavy, and another value 150 times in bucket 5 (entry 1)
CREATE TEMP TABLE chll_io_s AS
	SELECT chll_add_hash(chll_create(16), chll_t_hash(4, 3, 2)) AS small,
		   chll_t_add(chll_create(16), chll_t_hash(4, 3, 2), 200) AS heavy,
		   chll_t_add(chll_t_add(chll_create(16), chll_t_hash(4, 3, 2), 200),
					  chll_t_hash(4, 5, 1), 150) AS two;

-- ---------------------------------------------------------------------------
-- The text form: \x and the bytes in hexadecimal, format version first;
-- packed: the header (flag 0x80), then runs of zeros and literal bytes
-- ---------------------------------------------------------------------------
SELECT chll_create(16)::text AS empty_packed, length(chll_t_flat(chll_create(16))) AS flat_chars;
SELECT small::text AS small_packed FROM chll_io_s;
SELECT substr(chll_t_flat(small), 3 + 2 * 132, 16) AS bucket3_small,
	   substr(chll_t_flat(heavy), 3 + 2 * 132, 16) AS bucket3_heavy,
	   substr(chll_t_flat(heavy), 3 + 2 * 600, 16) AS entry0_heavy
  FROM chll_io_s;
-- the flat form is input too, and reads as the same sketch
SELECT bool_and(chll_t_flat(s)::chll::text = s::text) AS flat_input_same,
	   count(*) FILTER (WHERE length(s::text) < length(chll_t_flat(s))) AS smaller_packed
  FROM (SELECT small AS s FROM chll_io_s UNION ALL SELECT two FROM chll_io_s
		UNION ALL SELECT chll_agg(g, 4096) FROM generate_series(1, 20000) g
		UNION ALL SELECT chll_agg(g % 1000) FROM generate_series(1, 100000) g) x;
-- packed runs that do not make a sketch
SELECT left(small::text, -2)::chll FROM chll_io_s;
SELECT (small::text || '00')::chll FROM chll_io_s;
SELECT (small::text || '0100')::chll FROM chll_io_s;
SELECT (left(small::text, 50) || 'ffffffffff7f')::chll FROM chll_io_s;
SELECT (left(small::text, 50) || '00ffffff7f')::chll FROM chll_io_s;
SELECT (left(small::text, 50) || '8080808080800100')::chll FROM chll_io_s;
SELECT chll(substring(small::bytea FROM 1 FOR 30)) FROM chll_io_s;
SELECT * FROM chll_counters((SELECT two FROM chll_io_s));

-- round trips, with exact, overflowing and approximate counts
CREATE TEMP TABLE chll_io_t (id int, s chll);
INSERT INTO chll_io_t
	SELECT 1, chll_create()
	UNION ALL SELECT 2, small FROM chll_io_s
	UNION ALL SELECT 3, two FROM chll_io_s
	UNION ALL SELECT 4, chll_agg(g % 1000, 16) FROM generate_series(1, 100000) g
	UNION ALL SELECT 5, chll_agg(g, 4096) FROM generate_series(1, 20000) g
	UNION ALL SELECT 6, NULL;
SELECT id, (chll_info(s)).exact, (chll_info(s)).overflow_used,
	   s::text::chll::text = s::text AS text_round_trip,
	   chll_estimate(s::text::chll) = chll_estimate(s) AS same_estimate
  FROM chll_io_t ORDER BY id;
-- hexadecimal digits in either case
SELECT ('\x' || upper(substr(two::text, 3)))::chll::text = two::text AS upper_case,
	   ('\x' || upper(substr(chll_t_flat(two), 3)))::chll::text = two::text AS upper_case_flat
  FROM chll_io_s;
-- the I/O functions called directly
SELECT chll_in('\x01');
SELECT chll_in(NULL) IS NULL AS in_null, chll_out(NULL) IS NULL AS out_null,
	   chll_send(NULL) IS NULL AS send_null;
SELECT chll_recv(1);
SELECT chll_out('\x01');
-- the binary form is the bytes
SELECT chll_send(small) = decode(substr(small::text, 3), 'hex') AS send_is_bytes FROM chll_io_s;

-- COPY in binary format and back
\getenv abs_builddir PG_ABS_BUILDDIR
\set chll_file :abs_builddir '/results/chll_io.bin'
COPY chll_io_t TO :'chll_file' (FORMAT binary);
CREATE TEMP TABLE chll_io_t2 (LIKE chll_io_t);
COPY chll_io_t2 FROM :'chll_file' (FORMAT binary);
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE a.s::text = b.s::text OR (a.s IS NULL AND b.s IS NULL)) AS equal
  FROM chll_io_t a JOIN chll_io_t2 b USING (id);
-- and in text format
COPY chll_io_t TO :'chll_file';
TRUNCATE chll_io_t2;
COPY chll_io_t2 FROM :'chll_file';
SELECT count(*) FILTER (WHERE a.s::text = b.s::text OR (a.s IS NULL AND b.s IS NULL)) AS equal
  FROM chll_io_t a JOIN chll_io_t2 b USING (id);

-- ---------------------------------------------------------------------------
-- Every corrupt text input is an error with SQLSTATE 22P02
-- ---------------------------------------------------------------------------
\set VERBOSITY sqlstate
SELECT ''::chll;
\set VERBOSITY default
-- syntax
SELECT ''::chll;
SELECT 'abc'::chll;
SELECT ' \x01'::chll;
SELECT '\x'::chll;
SELECT '\x0'::chll;
SELECT '\x0g'::chll;
SELECT (small::text || '  ')::chll FROM chll_io_s;
SELECT ('\x' || repeat('00', 3000000))::chll;
-- header
SELECT '\x01'::chll;
SELECT chll_t_patch(small, 0, '00')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 0, '03')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 1, '03')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 1, '10')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 1, '11')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 1, '05')::chll FROM chll_io_s;
SELECT left(chll_t_flat(small), -2)::chll FROM chll_io_s;
SELECT (chll_t_flat(small) || '00')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 2, '04')::chll FROM chll_io_s;
-- the set given up, but its bytes left
SELECT chll_t_patch(small, 2, '02')::chll FROM chll_io_s;
-- header byte 3: removals that hit approximate counts, but none is
-- approximate; a z beyond the slots
SELECT chll_t_patch(small, 3, '01')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 3, '21')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 2, '80')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 4, '1100')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 6, '1100')::chll FROM chll_io_s;
-- an index's sketch may cap its overflow array below one entry per bucket
-- (abtree's sketch_buckets of 1024 and 2048): any capacity from 16 to the
-- space the layout keeps is valid, and the entries in use stay within it
SELECT chll_t_patch(small, 4, '0f00')::chll FROM chll_io_s;
SELECT chll_estimate(chll_t_patch(chll_create(32), 4, '1400')::chll) AS capped_20_of_32;
SELECT chll_t_patch(chll_t_patch(chll_create(32), 4, '1400')::chll, 6, '1500')::chll;
SELECT chll_t_patch(small, 8, '02')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 15, 'ff')::chll FROM chll_io_s;
-- buckets and counters
SELECT chll_t_patch(small, 132, '02')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 132, 'ffffffff')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 138, '00')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 139, '01')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 138, 'c8')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 138, 'ff')::chll FROM chll_io_s;
SELECT chll_t_patch(small, 138, '96')::chll FROM chll_io_s;
SELECT chll_t_patch(chll_t_patch(small, 2, '01')::chll, 132, '00000000')::chll FROM chll_io_s;
-- an empty sketch is in its initial state
SELECT chll_t_patch(chll_create(16), 16, 'ff')::chll;
SELECT chll_t_patch(chll_create(16), 2, '01')::chll;
-- overflow entries
SELECT chll_t_patch(heavy, 604, '80000000')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 600, '1000')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 602, '20')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 603, '01')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 602, '03')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 609, '01')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 6, '0000')::chll FROM chll_io_s;
SELECT chll_t_patch(heavy, 604, 'c9000000')::chll FROM chll_io_s;
SELECT chll_t_patch(two, 600, substr(chll_t_flat(two), 3 + 2 * 608, 16) || substr(chll_t_flat(two), 3 + 2 * 600, 16))::chll
  FROM chll_io_s;
SELECT chll_t_patch(two, 6, '0100')::chll FROM chll_io_s;
-- in COPY
COPY chll_io_t2 FROM stdin;
7	\\x01
\.

-- the exact set (16 buckets: the groups start at byte 728; hash 65536 is
-- key 1, in slot 1 at byte 742; hash 161 << 16 shares its home slot)
SELECT chll_t_patch(chll_add_hash(chll_create(16), 65536), 728, '02')::chll;
SELECT chll_t_patch(chll_add_hash(chll_create(16), 65536), 748, '02')::chll;
SELECT chll_t_patch(chll_add_hash(chll_create(16), 65536), 742,
                    repeat('00', 20) || '01000000000001000000')::chll;
SELECT chll_t_patch(chll_add_hash(chll_create(16), 65536), 742, '07')::chll;
SELECT chll_t_patch(chll_add_hash(chll_add_hash(chll_create(16), 65536), 161 << 16), 742,
                    'a1000000000001000000' || '01000000000001000000')::chll;
SELECT chll_t_patch(chll_create(16), 730, '01')::chll;
-- ---------------------------------------------------------------------------
-- Every corrupt binary input is an error with SQLSTATE 22P03: bytes are
-- written as a bytea column in binary COPY format and read back as chll
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE chll_io_bin (s chll);
COPY (SELECT chll_send(two) FROM chll_io_s) TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
SELECT s::text = (SELECT two::text FROM chll_io_s) AS binary_round_trip FROM chll_io_bin;
COPY (SELECT decode(substr(chll_t_patch(two, 0, '03'), 3), 'hex') FROM chll_io_s)
	TO :'chll_file' (FORMAT binary);
\set VERBOSITY sqlstate
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
\set VERBOSITY default
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
COPY (SELECT decode(substr(chll_t_patch(two, 604, '00000000'), 3), 'hex') FROM chll_io_s)
	TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
COPY (SELECT '\x01'::bytea) TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
COPY (SELECT ''::bytea) TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
COPY (SELECT decode(repeat('01', 3000000), 'hex')) TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
SELECT count(*) AS rows FROM chll_io_bin;

-- ---------------------------------------------------------------------------
-- Format 1 (abtree 0.1, no exact set) is read as format 2 with the set given
-- up, or, when empty, with an empty set: from text, binary, bytea and storage
-- ---------------------------------------------------------------------------
-- s in format 1: its first 728 bytes (16 buckets), version 1, no set flag
CREATE FUNCTION chll_t_v1(s chll) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT set_byte(set_byte(substring(decode(substr(chll_t_flat(s), 3), 'hex') FROM 1 FOR 728), 0, 1),
					2, get_byte(s::bytea, 2) & 1)
$$;
-- the counters a sketch holds, to compare two that differ in their sets
CREATE FUNCTION chll_t_counters(s chll) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(format('%s/%s/%s', bucket, zeros, count), ' ' ORDER BY bucket, zeros)
	  FROM chll_counters(s)
$$;
CREATE TEMP TABLE chll_io_v1 AS
	SELECT chll_t_v1(two) AS two_v1, chll_t_v1(chll_create(16)) AS empty_v1, two
	  FROM chll_io_s;
SELECT octet_length(two_v1) AS v1_bytes, length(chll_t_flat(two)) / 2 - 1 AS v2_bytes FROM chll_io_v1;
-- text input: the counters as they were, the set given up; the empty one exact
SELECT i.items, i.exact, i.exact_distinct, i.bytes, get_byte(v::bytea, 0) AS version,
	   chll_t_counters(v) = chll_t_counters(two) AS same_counters,
	   chll_estimate(v) = chll_estimate_counters(two) AS same_estimate
  FROM chll_io_v1, LATERAL (SELECT ('\x' || encode(two_v1, 'hex'))::chll AS v) x,
	   LATERAL chll_info(v) i;
SELECT i.items, i.exact_distinct, i.estimate, v = chll_create(16) AS equals_empty
  FROM chll_io_v1, LATERAL (SELECT ('\x' || encode(empty_v1, 'hex'))::chll AS v) x,
	   LATERAL chll_info(v) i;
-- chll(bytea) and the binary form read it the same way
SELECT chll(two_v1) = ('\x' || encode(two_v1, 'hex'))::chll AS bytea_same_as_text FROM chll_io_v1;
TRUNCATE chll_io_bin;
COPY (SELECT two_v1 FROM chll_io_v1) TO :'chll_file' (FORMAT binary);
COPY chll_io_bin FROM :'chll_file' (FORMAT binary);
SELECT (chll_info(s)).exact_distinct, octet_length(s::bytea) AS bytes,
	   s = (SELECT chll(two_v1) FROM chll_io_v1) AS same FROM chll_io_bin;
-- a format-1 value as 0.1 stored it (forged through a binary-coercible cast):
-- read as it is, written back in format 2 when changed
CREATE CAST (bytea AS chll) WITHOUT FUNCTION;
CREATE TEMP TABLE chll_io_stored AS SELECT two_v1::chll AS s FROM chll_io_v1;
DROP CAST (bytea AS chll);
SELECT octet_length(s::bytea) AS stored_bytes, round(chll_estimate(s)) AS estimate,
	   (chll_info(s)).exact_distinct, s = chll(s::bytea) AS equal_to_its_reading,
	   chll_hash_sketch(s) = chll_hash_sketch(chll(s::bytea)) AS same_hash
  FROM chll_io_stored;
UPDATE chll_io_stored SET s = chll_add_hash(s, chll_t_hash(4, 7, 0));
SELECT octet_length(s::bytea) AS bytes, get_byte(s::bytea, 0) AS version,
	   (chll_info(s)).items FROM chll_io_stored;
-- not format 1 after all: a wrong size, a flag 0.1 did not have
SELECT chll(substring(two_v1 FROM 1 FOR 700)) FROM chll_io_v1;
SELECT ('\x' || encode(set_byte(two_v1, 2, 2), 'hex'))::chll FROM chll_io_v1;
DROP FUNCTION chll_t_v1(chll);
DROP FUNCTION chll_t_counters(chll);

-- ---------------------------------------------------------------------------
-- Corrupt values that got past input (forged through a binary-coercible
-- cast, as on-disk corruption might) give errors, never a crash
-- ---------------------------------------------------------------------------
CREATE CAST (bytea AS chll) WITHOUT FUNCTION;
SELECT chll_estimate('\x01'::bytea::chll);
SELECT chll_add('\x'::bytea::chll, 1);
CREATE TEMP TABLE chll_io_bad AS
	SELECT decode(substr(chll_t_patch(small, 138, 'ff'), 3), 'hex')::chll AS s FROM chll_io_s;
SELECT chll_add_hash(s, chll_t_hash(4, 3, 2)) FROM chll_io_bad;
SELECT chll_remove_hash(s, chll_t_hash(4, 3, 2)) FROM chll_io_bad;
SELECT chll_union(chll_create(16), s) FROM chll_io_bad;
SELECT chll_union(s, chll_create(16)) FROM chll_io_bad;
SELECT * FROM chll_counters((SELECT s FROM chll_io_bad));
SELECT round(chll_estimate(s)) AS estimate FROM chll_io_bad;
SELECT s::text::chll FROM chll_io_bad;
-- an overflow entry whose counter byte no longer says so: a union tried to
-- add a second entry for the slot (an assertion failure, found by
-- test/stress/chll_fuzz.py); every value read is now validated in full
CREATE TEMP TABLE chll_io_bad2 AS
	SELECT decode(substr(chll_t_patch(heavy, 138, '64'), 3), 'hex')::chll AS s FROM chll_io_s;
SELECT chll_union(s, s) FROM chll_io_bad2;
SELECT chll_add_hash(s, chll_t_hash(4, 3, 2)) FROM chll_io_bad2;
SELECT s = s FROM chll_io_bad2;
DROP CAST (bytea AS chll);

DROP FUNCTION chll_t_hash(int, int, int);
DROP FUNCTION chll_t_add(chll, bigint, int);
DROP FUNCTION chll_t_patch(chll, int, text);
DROP FUNCTION chll_t_flat(chll);
DROP FUNCTION chll_flat_bytes(chll);

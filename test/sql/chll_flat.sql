-- chll_flat_bytes(s): the flat bytes of a chll value, packed or not, decoded
-- in SQL as src/hll/README ("Packed form") describes the packed form, apart
-- from the C code.  Used by the regress suite chll_io (\i) for its byte
-- patches and by bench/experiments/chll_storage.py for its flat baseline.
CREATE OR REPLACE FUNCTION chll_flat_bytes(s chll) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	b bytea := s::bytea;
	parts text[] := '{}';
	p int := 24;
	n int[];
	shift int;
BEGIN
	IF get_byte(b, 2) & 128 = 0 THEN
		RETURN b;
	END IF;
	parts := parts || encode(set_byte(substring(b FROM 1 FOR 24), 2, get_byte(b, 2) & 127), 'hex');
	WHILE p < length(b) LOOP
		n := ARRAY[0, 0];
		FOR k IN 1..2 LOOP
			shift := 0;
			LOOP
				n[k] := n[k] | ((get_byte(b, p) & 127) << shift);
				p := p + 1;
				EXIT WHEN get_byte(b, p - 1) < 128;
				shift := shift + 7;
			END LOOP;
		END LOOP;
		parts := parts || repeat('00', n[1]) || encode(substring(b FROM p + 1 FOR n[2]), 'hex');
		p := p + n[2];
	END LOOP;
	RETURN decode(array_to_string(parts, ''), 'hex');
END $$;

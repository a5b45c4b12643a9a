#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The shape of a tool's output, to compare rtlat's front ends with the real
# cyclictest and rtla (tests/rtlat_peers.sh): what a parser of the real
# tool's output depends on, without the numbers. Plain sh and one awk
# program, so that the comparison does not trust the tool under test, and
# one process per comparison (a process costs much on a debug kernel under
# TCG). Sourced.
#
# shape_compare text|json A B [LIST_RE [ROWS_RE]]: true if files A (the
#   real tool's output) and B (rtlat's) have the same shape; if not, prints
#   how they differ as ktap messages ("# -" A only, "# +" B only, "#   "
#   both) and fails. Status 2: a file is missing or not valid JSON.
# shape_print text|json FILE [LIST_RE [ROWS_RE]]: the shape of FILE, a line
#   each.
#
# The shape of text, a line for a line:
#   - a number becomes its class: "@" digits, "@0N" digits zero-padded to
#     N ("%06d": 000015 is "@06"), "@.N" with N digits after the point
#     ("%.2f"); so 16, 000016 and 16.00 differ, 16 and 12345 do not; a
#     number without a leading zero as wide as N or wider is the same as
#     "@0N" (a value that fills its "%05lu" field, or overflows it, as
#     cyclictest's max of 123456 µs does, is data, not another format);
#   - a run of spaces becomes one space, and the spaces between the start of
#     the line or a punctuation character and a number (the padding of a
#     right-aligned field, which a wide enough number fills) are dropped;
#     a line with "|" (rtla's columns) keeps where each "|" stands, as
#     "{|p,q,...}" after it (the fields' widths);
#     a tab becomes "<tab>", another control character "<^X>" (escape
#     "<^[>"); a terminal reset, ESC c (rtla top's refresh), ends the line
#     and becomes a line "<clear>";
#   - a line whose shape matches the awk regex LIST_RE (a list of any
#     length: cyclictest's overflow cycles) keeps what LIST_RE matched and
#     ends in "...";
#   - consecutive equal shapes that match the awk regex ROWS_RE (the rows of
#     a histogram that leaves empty buckets out: how many depends on the
#     data) are one; every other line counts, repeated or not (a thread's
#     or a CPU's line more is a difference); of the blocks that begin with
#     "<clear>" (a top's refreshes) only the last counts: the earlier ones
#     are the same lines with the data so far, and how many there are and
#     whether the first came before the first sample (rtla leaves a column
#     without samples empty) is timing;
#   - lines that report a condition of the run, not a format, are left
#     out: rtla's "N events missed" (when its buffer overflowed),
#     cyclictest's "# /dev/cpu_dma_latency set to 0us" (when it could hold
#     that device: not with --default-system, nor without the device).
# The shape of a JSON document: its key paths and the type of each value
# (object, array, string, int, real, bool, null), each once; keys that are
# numbers (threads, histogram buckets) become "@", array elements "[]". An
# empty "histogram" object is the same as one with numbered keys
# (cyclictest writes an empty histogram when no sample fell in its range;
# which buckets have samples is data); nowhere else is an empty object the
# same as a full one.

# shellcheck disable=SC2016 # an awk program
SHAPE_AWK='
function fail(why) {
	printf "# %s: %s\n", name[cur], why
	bad = 2
	exit 2
}

# ---- text: shapes of file f in sh[f, 1..n[f]]
# The shape s of a line, and w the width of each of its plain numbers ("@"),
# kept apart after "\034" (shp() drops it; eq() compares with it).
function tout(s, w) {
	if (w != "")
		s = s "\034" w
	if (n[f] && rows != "" && shp(s) ~ rows && eq(s, sh[f, n[f]]))
		return
	sh[f, ++n[f]] = s
}
function shp(e,    i) {
	i = index(e, "\034")
	return i ? substr(e, 1, i - 1) : e
}
# Whether shapes a and b are the same: equal, or but for a plain number
# of one as wide as the "@0N" of the other or wider.
function eq(a, b,    sa, sb, wa, wb, ia, ib, pa, pb, la, lb, ta, tb) {
	if (a == b)
		return 1
	sa = shp(a)
	sb = shp(b)
	split(substr(a, length(sa) + 2), wa, " ")
	split(substr(b, length(sb) + 2), wb, " ")
	ia = ib = 0
	while (1) {
		pa = match(sa, /@(0[0-9]+|\.[0-9]+)?/)
		la = RLENGTH
		pb = match(sb, /@(0[0-9]+|\.[0-9]+)?/)
		lb = RLENGTH
		if (!pa || !pb)
			return !pa && !pb && sa == sb
		if (substr(sa, 1, pa - 1) != substr(sb, 1, pb - 1))
			return 0
		ta = substr(sa, pa, la)
		tb = substr(sb, pb, lb)
		if (ta == "@")
			ia++
		if (tb == "@")
			ib++
		if (ta != tb && !(ta == "@" && tb ~ /^@0/ && wa[ia] + 0 >= substr(tb, 3) + 0) &&
			!(tb == "@" && ta ~ /^@0/ && wb[ib] + 0 >= substr(ta, 3) + 0))
			return 0
		sa = substr(sa, pa + la)
		sb = substr(sb, pb + lb)
	}
}
# How many plain numbers ("@", not "@0N" nor "@.N") s has.
function plain(s,    k) {
	k = 0
	while (match(s, /@(0[0-9]+|\.[0-9]+)?/)) {
		if (RLENGTH == 1)
			k++
		s = substr(s, RSTART + RLENGTH)
	}
	return k
}
# Each number of s as its class (see above).
function numbers(s,    out, t, c) {
	out = ""
	while (match(s, /[0-9]+(\.[0-9]+)?/)) {
		t = substr(s, RSTART, RLENGTH)
		if ((c = index(t, ".")) > 0)
			c = "@." (length(t) - c)
		else if (length(t) > 1 && substr(t, 1, 1) == "0")
			c = "@0" length(t)
		else
			c = "@" substr(WM, 1, length(t))
		out = out substr(s, 1, RSTART - 1) c
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}
# Where each "|" of s stands: "{|p,q,...}", or "" without one.
function bars(s,    i, out) {
	out = ""
	for (i = 1; i <= length(s); i++)
		if (substr(s, i, 1) == "|")
			out = out (out == "" ? "" : ",") i
	return out == "" ? "" : " {|" out "}"
}
function tline(s,    b, w, out, i, k, m, ws) {
	if (s ~ /events missed, results might not be accurate$/ || s ~ /^# \/dev\/cpu_dma_latency set to [0-9]+us$/)
		return
	gsub(/\t/, "<tab>", s)
	while (match(s, ctlre))
		s = substr(s, 1, RSTART - 1) "<^" ctl[substr(s, RSTART, 1)] ">" substr(s, RSTART + 1)
	b = bars(s)
	s = numbers(s)
	# The "-" rtla prints for a value without samples is a value.
	s = " " s " "
	while (gsub(/ - /, " @ ", s))
		;
	s = substr(s, 2, length(s) - 2)
	gsub(/ +/, " ", s)
	sub(/^ @/, "@", s)
	# The width of each plain number (the marks numbers() put after its "@";
	# 0 for the "-" of rtla), apart.
	w = out = ""
	while ((i = index(s, "@")) > 0) {
		out = out substr(s, 1, i)
		s = substr(s, i + 1)
		for (k = 0; substr(s, k + 1, 1) == WM1; k++)
			;
		if (k || s !~ /^(0[0-9]+|\.[0-9]+)/)
			w = w (w == "" ? "" : " ") k
		s = substr(s, k + 1)
	}
	s = out s
	while (match(s, /[^[:alnum:]@ ] @/))
		s = substr(s, 1, RSTART) substr(s, RSTART + 2)
	if (list != "" && match(s, list)) {
		s = substr(s, 1, RSTART + RLENGTH - 1) "..."
		m = split(w, ws, " ")
		w = ""
		for (k = 1; k <= plain(s) && k <= m; k++)
			w = w (k > 1 ? " " : "") ws[k]
	}
	tout(s b, w)
}
function text(    s, i, cleared) {
	sub(/\r$/, "")
	s = $0
	while ((i = index(s, esc "c")) > 0) {
		if (i > 1)
			tline(substr(s, 1, i - 1))
		tout("<clear>")
		s = substr(s, i + 2)
		cleared = 1
	}
	if (s != "" || !cleared)
		tline(s)
}
# Into line[k, 1..len[k]], of the <clear> blocks the last only.
function blocks(k,    i, b, nb, blk, m, part) {
	for (i = 1; i <= n[k]; i++) {
		if (sh[k, i] == "<clear>" || nb == 0)
			blk[++nb] = ""
		blk[nb] = blk[nb] sh[k, i] "\n"
	}
	len[k] = 0
	for (b = 1; b <= nb; b++) {
		if (b < nb && substr(blk[b], 1, 8) == "<clear>\n")
			continue
		m = split(substr(blk[b], 1, length(blk[b]) - 1), part, "\n")
		for (i = 1; i <= m; i++)
			line[k, ++len[k]] = part[i]
	}
}

# ---- JSON: the document of file k into line[k, 1..len[k]], sorted
function ws() {
	while (p <= dl && index(" \t\r\n", substr(doc, p, 1)))
		p++
}
function str(    s, c) {
	p++
	s = ""
	while (p <= dl) {
		c = substr(doc, p, 1)
		if (c == "\"") {
			p++
			return s
		}
		if (c == "\\") {
			s = s substr(doc, p, 2)
			p += 2
			continue
		}
		s = s c
		p++
	}
	fail("invalid JSON: unterminated string")
}
function emit(path, type,    e) {
	e = (path == "" ? "." : path) " " type
	if (!((cur, e) in seen)) {
		seen[cur, e] = 1
		line[cur, ++len[cur]] = e
	}
}
function value(path,    c, cl, k) {
	ws()
	c = substr(doc, p, 1)
	if (c == "{" || c == "[") {
		emit(path, c == "{" ? "object" : "array")
		cl = c == "{" ? "}" : "]"
		p++
		ws()
		if (substr(doc, p, 1) == cl) {
			if (c == "{" && path ~ /(^|\.)histogram$/)
				empty[cur, path] = 1
			p++
			return
		}
		while (1) {
			if (c == "[") {
				value(path "[]")
			} else {
				ws()
				if (substr(doc, p, 1) != "\"")
					fail("invalid JSON: a key expected at offset " p)
				k = str()
				if (k ~ /^[0-9]+$/)
					k = "@"
				ws()
				if (substr(doc, p, 1) != ":")
					fail("invalid JSON: \":\" expected at offset " p)
				p++
				value(path "." k)
			}
			ws()
			k = substr(doc, p, 1)
			p++
			if (k == cl)
				return
			if (k != ",")
				fail("invalid JSON: \",\" or \"" cl "\" expected at offset " p - 1)
		}
	}
	if (c == "\"") {
		str()
		emit(path, "string")
	} else if (match(substr(doc, p, 40), /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) {
		emit(path, substr(doc, p, RLENGTH) ~ /[.eE]/ ? "real" : "int")
		p += RLENGTH
	} else if (substr(doc, p, 4) == "true" || substr(doc, p, 4) == "null") {
		emit(path, substr(doc, p, 4) == "true" ? "bool" : "null")
		p += 4
	} else if (substr(doc, p, 5) == "false") {
		emit(path, "bool")
		p += 5
	} else {
		fail("invalid JSON: a value expected at offset " p)
	}
}
function json(k,    i, j, t) {
	cur = k
	doc = body[k]
	dl = length(doc)
	p = 1
	len[k] = 0
	value("")
	ws()
	if (p <= dl)
		fail("invalid JSON: text after the document at offset " p)
	for (i = 2; i <= len[k]; i++)
		for (j = i; j > 1 && line[k, j - 1] > line[k, j]; j--) {
			t = line[k, j]
			line[k, j] = line[k, j - 1]
			line[k, j - 1] = t
		}
}

BEGIN {
	esc = sprintf("%c", 27)
	# The mark of the digits of a plain number (numbers(), tline()).
	WM1 = sprintf("%c", 29)
	for (i = 0; i < 64; i++)
		WM = WM WM1
	for (i = 1; i < 32; i++)
		ctl[sprintf("%c", i)] = sprintf("%c", i + 64)
	ctl[sprintf("%c", 127)] = "?"
	ctlre = "[" sprintf("%c", 1) "-" sprintf("%c", 31) sprintf("%c", 127) "]"
}
FNR == 1 {
	name[++f] = FILENAME
	cur = f
}
kind == "text" { text() }
kind == "json" { body[f] = body[f] $0 "\n" }

# Drop from file k what the other file has as an empty "histogram" object
# where k has numbered keys (a histogram without a bucket in its range).
function unmap(k,    o, i, m, e, path, at, c, cut) {
	o = 3 - k
	m = 0
	for (i = 1; i <= len[k]; i++) {
		e = line[k, i]
		path = substr(e, 1, index(e, " ") - 1)
		cut = 0
		for (at = 1; !cut && at < length(path); at++) {
			if (substr(path, at, 2) != ".@")
				continue
			c = substr(path, at + 2, 1)
			if ((c == "" || c == "." || c == "[") && ((o, substr(path, 1, at - 1)) in empty))
				cut = 1
		}
		if (!cut)
			line[k, ++m] = e
	}
	len[k] = m
}

# Whether file k has lines of ROWS_RE; and without them: rows whose
# number is data (a histogram without empty buckets) may be none at all on
# one side (no sample fell in the range there).
function hasrows(k,    i) {
	for (i = 1; i <= len[k]; i++)
		if (shp(line[k, i]) ~ rows)
			return 1
	return 0
}
function droprows(k,    i, m) {
	m = 0
	for (i = 1; i <= len[k]; i++)
		if (shp(line[k, i]) !~ rows)
			line[k, ++m] = line[k, i]
	len[k] = m
}

# A minimal difference of line[1, *] and line[2, *] (a longest common
# subsequence kept): what differs with two lines around it, at most 40.
function diff(    i, j, L, op, m, k, near, out, gap) {
	for (i = len[1]; i >= 0; i--)
		for (j = len[2]; j >= 0; j--)
			if (i == len[1] || j == len[2])
				L[i, j] = 0
			else if (eq(line[1, i + 1], line[2, j + 1]))
				L[i, j] = L[i + 1, j + 1] + 1
			else
				L[i, j] = L[i + 1, j] > L[i, j + 1] ? L[i + 1, j] : L[i, j + 1]
	i = j = m = 0
	while (i < len[1] || j < len[2]) {
		if (i < len[1] && j < len[2] && eq(line[1, i + 1], line[2, j + 1])) {
			op[++m] = "#   " shp(line[1, ++i])
			j++
		} else if (i < len[1] && (j == len[2] || L[i + 1, j] >= L[i, j + 1])) {
			op[++m] = "# - " shp(line[1, ++i])
		} else {
			op[++m] = "# + " shp(line[2, ++j])
		}
	}
	for (k = 1; k <= m; k++)
		if (substr(op[k], 3, 1) != " ")
			for (i = k - 2; i <= k + 2; i++)
				near[i] = 1
	for (k = 1; k <= m; k++) {
		if (!(k in near)) {
			gap = 1
			continue
		}
		if (gap && out)
			print "#   ..."
		gap = 0
		if (++out <= 40)
			print op[k]
	}
	if (out > 40)
		print "# (" out - 40 " lines more)"
}
END {
	if (bad)
		exit bad
	want = mode == "print" ? 1 : 2
	if (f < want) {
		print "# nothing to read (a missing or empty file)"
		exit 2
	}
	for (k = 1; k <= want; k++)
		if (kind == "json")
			json(k)
		else
			blocks(k)
	if (kind == "text" && rows != "" && want == 2)
		for (k = 1; k <= 2; k++)
			if (hasrows(k) && !hasrows(3 - k))
				droprows(k)
	if (mode == "print") {
		for (i = 1; i <= len[1]; i++)
			print shp(line[1, i])
		exit 0
	}
	if (kind == "json") {
		unmap(1)
		unmap(2)
	}
	same = len[1] == len[2]
	for (i = 1; same && i <= len[1]; i++)
		same = eq(line[1, i], line[2, i])
	if (same)
		exit 0
	diff()
	exit 1
}'

shape_compare()
{
	[ -s "$2" ] || { echo "# $2: missing or empty"; return 2; }
	[ -s "$3" ] || { echo "# $3: missing or empty"; return 2; }
	awk -v mode=compare -v kind="$1" -v list="${4:-}" -v rows="${5:-}" "$SHAPE_AWK" "$2" "$3"
}

shape_print()
{
	awk -v mode=print -v kind="$1" -v list="${3:-}" -v rows="${4:-}" "$SHAPE_AWK" "$2"
}

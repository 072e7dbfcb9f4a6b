# tests/gpu/corpus/table.awk: the corpus runner's results (results.tsv, one
# tab-separated line a program, sorted by name) as a markdown table, then
# the programs not compared, then one summary line. Run as
#   sort results.tsv | awk -F'\t' -v slow=1.5 -f table.awk
# Columns in: case kind native axon same isolation t_native t_axon ratio note
# A program passes when it passes natively and through axon with the same
# output and clean isolation, and its native run loaded NVIDIA's libcuda
# (else the note starts "NOT NATIVE"); "slow" marks an axon/native wall-time ratio
# above `slow`, which Documentation/testing-gpu.md must explain.
BEGIN {
	if (slow == "") slow = 1.5
	n = 0; m = 0; pass = 0; fail = 0; nslow = 0; natfail = 0; unbuilt = 0; unrun = 0
}
$3 == "pass" {
	ok = ($4 == "pass" && $5 == "yes" && $6 == "ok" && $10 !~ /^NOT NATIVE/)
	if (ok) pass++; else fail++
	mark = ""
	if ($9 != "-" && $9 + 0 > slow + 0) { mark = " slow"; nslow++ }
	rows[n++] = sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s%s | %s |", $1, $2, $3, $4, $5, $6, $7, $8, $9, mark, ok ? ($10 == "" ? "" : $10) : ("**FAIL**" ($10 == "" ? "" : "; " $10)))
	next
}
{
	if ($10 ~ /^fails natively/) natfail++
	else if ($10 ~ /^not built/) unbuilt++
	else unrun++
	others[m++] = sprintf("- `%s` (%s): %s", $1, $2, $10)
}
END {
	print "| case | kind | native | axon | same output | isolation | native s | axon s | axon/native | note |"
	print "| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |"
	for (i = 0; i < n; i++) print rows[i]
	if (m > 0) {
		print ""
		print "Not compared:"
		print ""
		for (i = 0; i < m; i++) print others[i]
	}
	print ""
	printf "corpus: %d of %d programs that pass natively pass through axon; %d fail; %d slower than %sx native; not compared: %d fail natively, %d not built, %d not run\n", pass, pass + fail, fail, nslow, slow, natfail, unbuilt, unrun
}

# tests/gpu/corpus/normalise.sed: what may differ between a corpus program's
# native run and its run through axon, rewritten to one form before the two
# outputs are compared (sed -E; tests/gpu/corpus/normalise applies it, and
# the case's lines of tests/gpu/corpus/filters after it). Each rule is here
# because the machine, not the CUDA implementation, decides the text.
#
# The isolation checker's own lines (axon run only) and tests/cudart's
# "process check" line, as gpucheck.sh drops them.
/^isocheck: /d
/^process check/d
# The driver's version: axon reports at most the one its headers know.
s/(driver|Driver Version)([^0-9]*)[0-9]+(\.[0-9]+)*/\1\2N/g
# A line that reports a time, a rate or a speed-up (the samples print them
# in a dozen forms: "Time = 0.0123 s", "Processing time: 4.2 (ms)",
# "Throughput = 12.3 GB/s", "Performance= 1234.5 GFlop/s"): every number on
# it becomes N; its words must still be the same.
/\b([Tt]ime[sd]?|TIME|[Ee]lapsed|[Tt]hroughput|[Bb]andwidth|[Pp]erformance|[Ss]peed-?up|[Ll]atency|per second)\b|[0-9] *\(?(ns|us|usec|ms|msec|msecs|sec|secs|seconds?|[KMGT]i?B\/s|[KMGT]B\/sec|[GMT]?[Ff]lops?\/s|[GMT]FLOPS?(\/s)?|[GMT][Ff]lops|[GM]?[Oo]ptions\/s|[GM]?ops\/s)\)?\b/{
	s/[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/N/g
}
# Addresses (%p, device pointers) and process ids.
s/0x[0-9a-fA-F]{6,}/0xADDR/g
s/\b([Pp][Ii][Dd]|process) *[=:]? *[0-9]+/\1 N/g
# Dates and clock times.
s/\b[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?/DATE/g
s/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]+ [0-9:]{8}( [0-9]{4})?/DATE/g

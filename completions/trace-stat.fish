complete -c trace-stat -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
jsonl\t''
paje\t''
pallas\t''
otf2\t''
trace\t''
stf\t''
stf-dump\t''"
complete -c trace-stat -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use. The output is the same for every N' -r
complete -c trace-stat -l by -d 'What a row is per: profile: name, loc,name, cat,name or loc; messages: pair (sender and receiver) or comm; waits: pattern, loc,pattern, name,pattern or pair,pattern' -r -f -a "name\t''
loc\,name\t''
cat\,name\t''
loc\t''
pair\t''
comm\t''
pattern\t''
loc\,pattern\t''
name\,pattern\t''
pair\,pattern\t''"
complete -c trace-stat -l histogram -d 'messages: a histogram of message sizes in up to BINS log-spaced bins (low, high, count). profile: instead of the figures, a histogram of each name\'s durations in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their edges on the sketch\'s 1 % buckets so each count is exact for its range (low and high both in the bin; fewer bins where the span holds fewer buckets)' -r
complete -c trace-stat -l kinds -d 'imbalance: compare the locations of these kinds (their container row\'s cat: thread, gpu, metric, or a Pajé container type), or all; by default every kind but accelerator streams (gpu) and metric recorders (metric)' -r
complete -c trace-stat -l bins -d 'timeline: cut the run (first to last time) into N equal bins (the default: 100). The span is read in a first pass, so the inputs must be files or folders, and the report cannot be --partial' -r
complete -c trace-stat -l bin -d 'timeline: bins of this width (10ms, 1s, 5000: ns), from the trace\'s origin (time 0): one pass, any input, and parts merge. At most 1 000 000 bins are printed: wider is a usage error' -r
complete -c trace-stat -l top -d 'At most N rows, the largest first' -r
complete -c trace-stat -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -l no-header -d 'Leave out the header line'
complete -c trace-stat -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -l matrix -d 'messages: a sender × receiver matrix instead of rows, one row per sender and a column per receiver (every location that sent or received, in natural order), zeros filled: bytes, or with --count messages, with --time the transfer time'
complete -c trace-stat -l count -d 'messages --matrix: count messages instead of bytes'
complete -c trace-stat -l time -d 'messages --matrix: sum transfer times instead of bytes'
complete -c trace-stat -l inclusive -d 'imbalance: inclusive times instead of exclusive ones'
complete -c trace-stat -l per-location -d 'imbalance: one more column per location (in natural order) with the function\'s time there, for heat maps'
complete -c trace-stat -l segments -d 'critical-path: the path\'s segments (location, function, start, end) in time order instead of its time per function'
complete -c trace-stat -l states -d 'timeline: per state type and value instead of per function'
complete -c trace-stat -l wide -d 'timeline: one row per bin and one column per function (the --top heaviest, the rest in `other`), for gnuplot\'s rowstacked histograms'
complete -c trace-stat -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location (profile, states, messages of msg rows, resources)'
complete -c trace-stat -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -s h -l help -d 'Print help'
complete -c trace-stat -s V -l version -d 'Print version'

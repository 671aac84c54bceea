complete -c trace-filter -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
jsonl\t''
parquet\t''
paje\t''
pallas\t''
otf2\t''
trace\t''
paraver\t''
stf\t''
stf-dump\t''
chrome\t''"
complete -c trace-filter -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-filter -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-filter -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-filter -s o -l output -d 'Write to FILE instead of standard output; FILE is replaced only once the output is whole (an error or an interruption leaves it as it was), except with --line-buffered, which writes it in place' -r
complete -c trace-filter -s t -l output-format -d 'Write FORMAT: by default the one -o\'s extension names (`.etf`, `.paje`, `.jsonl`...), else the record stream as TSV' -r -f -a "tsv\t''
jsonl\t''
parquet\t''
paje\t''
pjdump\t''
pallas\t''
otf2\t''
trace\t''
paraver\t''
stf\t''
stf-single\t''
chrome\t''
perfetto\t''"
complete -c trace-filter -l unit -d 'Write times in UNIT as exact decimals (1.5 for 1500 ns in us) instead of integer nanoseconds: a table of the data rows for other tools (R, DuckDB, gnuplot), with its header line unless --rows-only or --no-header, and no longer a stream' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-filter -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-filter -s k -l kind -d 'Keep rows of these kinds (comma-separated or repeated)' -r -f -a "meta\t''
container\t''
enter\t''
leave\t''
state\t''
event\t''
send\t''
recv\t''
msg\t''
coll\t''
counter\t''
claim\t''
dep\t''
signal\t''
type\t''
destroy\t''"
complete -c trace-filter -s c -l cat -d 'Keep rows whose category matches GLOB (repeatable: any)' -r
complete -c trace-filter -s n -l name -d 'Keep rows whose name matches REGEX (unanchored; use ^...$ for whole names)' -r
complete -c trace-filter -l from -d 'Keep rows overlapping the window from TIME: nanoseconds from the trace\'s origin.' -r
complete -c trace-filter -l to -d 'Keep rows overlapping the window that ends before TIME (same syntax as --from); without it the window is open at its end' -r
complete -c trace-filter -s a -l attr -d 'Keep rows with attribute KEY; with a test: KEY=TEXT, KEY!=TEXT, or a number compared exactly: KEY>N, KEY>=N, KEY<N, KEY<=N (quote them for the shell).' -r
complete -c trace-filter -l partition-by -d 'Write a Hive-partitioned folder (-o DIR): DIR/COLUMN=VALUE/part-N.parquet, one folder per location or kind' -r -f -a "loc\t''
kind\t''"
complete -c trace-filter -l row-group -d 'Rows per Parquet row group (default 262144; fewer when its text passes 64 MiB); memory grows with it' -r
complete -c trace-filter -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-filter -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-filter -l precision -d 'Decimals of times and values (pj_dump\'s -l; default 6)' -r
complete -c trace-filter -l pallas-codec -d 'How timestamps and durations are stored: none, zstd (the default), masking (each block\'s values in the bytes the largest needs) or zstd-masking; all lossless' -r -f -a "none\t''
zstd\t''
masking\t''
zstd-masking\t''"
complete -c trace-filter -l otf2-window -d 'Events held to put each location\'s events in time order (a state, collective or message starts before rows already seen); one that starts before what was written is kept whole (default 262144; memory grows with it)' -r
complete -c trace-filter -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-filter -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-filter -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-filter -l list-formats -d 'List the formats that can be read and written, then exit'
complete -c trace-filter -l json -d 'Write the stream as JSON Lines (same as `-t jsonl`)'
complete -c trace-filter -l no-header -d 'Leave out the TSV header line (for tools that want bare rows)'
complete -c trace-filter -l rows-only -d 'Write data rows only: no header, no meta, type or container rows (for awk and gnuplot; the output is then no longer a stream)'
complete -c trace-filter -l line-buffered -d 'Flush after every row (for following a live trace)'
complete -c trace-filter -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-filter -s v -l invert -d 'Keep the rows that do not match instead (meta and needed containers stay)'
complete -c trace-filter -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-filter -l user-fields -d 'Append the values of user-defined fields (pj_dump\'s -u)'
complete -c trace-filter -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-filter -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-filter -s V -l version -d 'Print version'

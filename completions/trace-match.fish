complete -c trace-match -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-match -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-match -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-match -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-match -s o -l output -d 'Write to FILE instead of standard output; FILE is replaced only once the output is whole (an error or an interruption leaves it as it was), except with --line-buffered, which writes it in place' -r
complete -c trace-match -s t -l output-format -d 'Write FORMAT: by default the one -o\'s extension names (`.etf`, `.paje`, `.jsonl`...), else the record stream as TSV' -r -f -a "tsv\t''
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
complete -c trace-match -l unit -d 'Write times in UNIT as exact decimals (1.5 for 1500 ns in us) instead of integer nanoseconds: a table of the data rows for other tools (R, DuckDB, gnuplot), with its header line unless --rows-only or --no-header, and no longer a stream' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-match -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-match -l unmatched -d 'Halves that never match: keep (written flagged U when their location is destroyed or at the end), drop, or error (exit 1 naming the first by file and line; a Pajé link --ignore-incomplete-links would drop too)' -r -f -a "keep\t'Written flagged U'
drop\t'Left out (counted in the summary)'
error\t'Exit 1, naming the first'"
complete -c trace-match -l max-pending -d 'Stop with an error (naming the row) when more than N halves wait for their partner: the guard for a stream where one side is missing (0: no bound)' -r
complete -c trace-match -l max-held -d 'Stop with an error (naming the row, the collective and who has not reached it) when more than N rows are held behind a collective instance not every participant has reached: the guard for a stream where one never comes (0: no bound)' -r
complete -c trace-match -l partition-by -d 'Write a Hive-partitioned folder (-o DIR): DIR/COLUMN=VALUE/part-N.parquet, one folder per location or kind' -r -f -a "loc\t''
kind\t''"
complete -c trace-match -l row-group -d 'Rows per Parquet row group (default 262144; fewer when its text passes 64 MiB); memory grows with it' -r
complete -c trace-match -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-match -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-match -l precision -d 'Decimals of times and values (pj_dump\'s -l; default 6)' -r
complete -c trace-match -l pallas-codec -d 'How timestamps and durations are stored: none, zstd (the default), masking (each block\'s values in the bytes the largest needs) or zstd-masking; all lossless' -r -f -a "none\t''
zstd\t''
masking\t''
zstd-masking\t''"
complete -c trace-match -l otf2-window -d 'Events held to put each location\'s events in time order (a state, collective or message starts before rows already seen); one that starts before what was written is kept whole (default 262144; memory grows with it)' -r
complete -c trace-match -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-match -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-match -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-match -l list-formats -d 'List the formats that can be read and written, then exit'
complete -c trace-match -l json -d 'Write the stream as JSON Lines (same as `-t jsonl`)'
complete -c trace-match -l no-header -d 'Leave out the TSV header line (for tools that want bare rows)'
complete -c trace-match -l rows-only -d 'Write data rows only: no header, no meta, type or container rows (for awk and gnuplot; the output is then no longer a stream)'
complete -c trace-match -l line-buffered -d 'Flush after every row (for following a live trace)'
complete -c trace-match -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-match -l halves -d 'Write the halves too (each where it was), not only the messages'
complete -c trace-match -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-match -l user-fields -d 'Append the values of user-defined fields (pj_dump\'s -u)'
complete -c trace-match -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-match -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-match -s V -l version -d 'Print version'

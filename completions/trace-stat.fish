# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_trace_stat_global_optspecs
    string join \n f/input-format= q/quiet strict prefix-inputs l/loc= L/loc-name= under= o/output= csv json no-header no-progress threads= by= histogram= counters partial merge ids n/top= unit= ignore-incomplete-links reorder-window= time-unit= lenient h/help V/version
end

function __fish_trace_stat_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_trace_stat_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_trace_stat_using_subcommand
    set -l cmd (__fish_trace_stat_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c trace-stat -n "__fish_trace_stat_needs_command" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l by -d 'What a row is per (default: name)' -r -f -a "name\t''
loc\,name\t''
cat\,name\t''
loc\t''"
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l histogram -d 'messages: a histogram of message sizes in up to BINS log-spaced bins (low, high, count). profile: instead of the figures, a histogram of each name\'s durations in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their edges on the sketch\'s 1 % buckets so each count is exact for its range (low and high both in the bin; fewer bins where the span holds fewer buckets)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l counters -d 'profile: instead of the times, each counter\'s change over the frames, per key and counter: frames counted, inclusive and exclusive change (counters sampled at the frames\' enter and leave, as Score-P records its metrics)'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "profile" -d 'time per function: count, inclusive and exclusive time, quantiles'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "messages" -d 'bytes and transfer times per sender and receiver (or communicator)'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "counters" -d 'counter samples per location: min, max, mean, time-weighted mean'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "states" -d 'time per container, state type and value'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "resources" -d 'TRACE resources: utilisation, peak amount and Little\'s law'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "summary" -d 'the trace at a glance'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "imbalance" -d 'functions by how unevenly the locations spend time in them'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "timeline" -d 'exclusive time per time bin and function (or state), for plots'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "waits" -d 'wait states: who waited for whom, and how long'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "critical-path" -d 'the chain of work and waits that sets the run\'s length'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "top" -d 'the longest frames: where, when, how long'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "calltree" -d 'the calling-context tree: time per call path, for flame graphs'
complete -c trace-stat -n "__fish_trace_stat_needs_command" -a "compare" -d 'two runs\' profiles side by side: what got slower (a CI gate)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l by -d 'What a row is per (default: name)' -r -f -a "name\t''
loc\,name\t''
cat\,name\t''
loc\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l histogram -d 'messages: a histogram of message sizes in up to BINS log-spaced bins (low, high, count). profile: instead of the figures, a histogram of each name\'s durations in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their edges on the sketch\'s 1 % buckets so each count is exact for its range (low and high both in the bin; fewer bins where the span holds fewer buckets)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l counters -d 'profile: instead of the times, each counter\'s change over the frames, per key and counter: frames counted, inclusive and exclusive change (counters sampled at the frames\' enter and leave, as Score-P records its metrics)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand profile" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l by -d 'What a row is per (default: pair)' -r -f -a "pair\t''
comm\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l histogram -d 'messages: a histogram of message sizes in up to BINS log-spaced bins (low, high, count). profile: instead of the figures, a histogram of each name\'s durations in up to BINS log-spaced bins (low, high, count: gnuplot-ready), their edges on the sketch\'s 1 % buckets so each count is exact for its range (low and high both in the bin; fewer bins where the span holds fewer buckets)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l matrix -d 'messages: a sender × receiver matrix instead of rows, one row per sender and a column per receiver (every location that sent or received, in natural order), zeros filled: bytes, or with --count messages, with --time the transfer time'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l count -d 'messages --matrix: count messages instead of bytes'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l time -d 'messages --matrix: sum transfer times instead of bytes'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand messages" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand counters" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand states" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand resources" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand summary" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l kinds -d 'imbalance: compare the locations of these kinds (their container row\'s cat: thread, gpu, metric, or a Pajé container type), or all; by default every kind but accelerator streams (gpu) and metric recorders (metric)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l inclusive -d 'imbalance: inclusive times instead of exclusive ones'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l per-location -d 'imbalance: one more column per location (in natural order) with the function\'s time there, for heat maps'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand imbalance" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l by -d 'What a row is per (default: name)' -r -f -a "name\t''
pair\t''
loc\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l bins -d 'timeline: cut the run (first to last time) into N equal bins (the default: 100).' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l bin -d 'timeline: bins of this width (10ms, 1s, 5000: ns), from the trace\'s origin (time 0): one pass, any input, and parts merge.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l states -d 'timeline: per state type and value instead of per function'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l messages -d 'timeline: message volume instead of time: per bin and sender and receiver (--by pair, the default) or sender (--by loc), the messages sent and their bytes, binned by send time (send halves and msg rows)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l wide -d 'timeline: one row per bin and one column per function (the --top heaviest, the rest in `other`), for gnuplot\'s rowstacked histograms'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand timeline" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l by -d 'What a row is per (default: pattern)' -r -f -a "pattern\t''
loc\,pattern\t''
name\,pattern\t''
pair\,pattern\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand waits" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l segments -d 'critical-path: the path\'s segments (location, function, start, end) in time order instead of its time per function'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand critical-path" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l name -d 'top: only frames whose name matches this regular expression (anywhere in the name: ^...$ to match it whole)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand top" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l by -d 'What a row is per (default: path)' -r -f -a "path\t''
loc\,path\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l partial -d 'Write the report\'s state (sums, counts, extremes, sketch buckets) instead of its table, to be merged with --merge: run it on parts of a trace split by location'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l merge -d 'The inputs are files written with --partial (by the same report and --by): print the report of all of them, as one run over the whole input would'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l folded -d 'calltree: the folded stacks flame-graph tools read (flamegraph.pl, inferno, speedscope): one line per path with exclusive time, `a;b;c TIME`, no header'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l svg -d 'calltree: a flame graph of the call paths, as a self-contained SVG (one box per path, as wide as its inclusive time; names and times in the titles), drawn by the inferno crate from the folded stacks'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand calltree" -s V -l version -d 'Print version'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s f -l input-format -d 'Read every input as FORMAT instead of detecting it' -r -f -a "tsv\t''
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
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s l -l loc -d 'Keep rows whose location id (the `loc` column) matches GLOB (`*`, `?`, `[a-z]`; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s L -l loc-name -d 'Keep rows whose location\'s display name (its `container` row\'s `name`) matches GLOB (repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l under -d 'Keep rows on the container whose id or name matches GLOB, or on any container below it: a subtree (a Pajé thread and its state lanes, a process and its threads; repeatable: any)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s o -l output -d 'Write to FILE instead of standard output' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l threads -d 'Threads: 1 does everything on one core; N > 1 puts N − 1 more to work on inputs that split (the TSV stream\'s chunks of rows, a Pallas trace\'s threads, a Pajé trace\'s lines cut into words) and encodes the output on a thread of its own (a copy of the rows as read stays on the reading thread); auto is the number of cores the process may use.' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l by -d 'What a row is per (default: name)' -r -f -a "name\t''
loc\,name\t''
cat\,name\t''
loc\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s n -l top -d 'At most N rows, the largest first (top: the N longest frames, default 10)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l metric -d 'compare: what is compared: exclusive time (the default), inclusive time or the count of frames' -r -f -a "exclusive\t''
inclusive\t''
count\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l fail-over -d 'compare: exit 1 when a key present in both runs grew by more than PCT percent of its base value (a key whose base value is 0 and grew: always), naming the one that grew most on standard error: a CI gate' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l min -d 'compare: leave out the keys whose inclusive time is below TIME (10us, 1ms, 5000: ns) in both runs, as noise' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l unit -d 'Unit of times and durations: ns (integers, the default), us, ms or s (exact decimals)' -r -f -a "ns\t''
us\t''
ms\t''
s\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l reorder-window -d 'Rows held to put events of different containers back in time order (default 4096; memory grows with it)' -r
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l time-unit -d 'Unit of the file\'s times, which Pajé does not state (default s; StarPU\'s FxT tools write ms)' -r -f -a "s\t''
ms\t''
us\t''
ns\t''"
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s q -l quiet -d 'Print no warnings (nor trace-match\'s summary): errors only'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l strict -d 'Refuse frames that do not nest (a leave of a frame that is open but not the innermost, or of none) at the first, instead of keeping them with one warning (docs/stream.md, "Frames that do not nest")'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l prefix-inputs -d 'Put each input\'s file name before its locations (`a.etf/R0`), to merge traces whose location names collide (references from one input to another\'s locations then no longer resolve)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l csv -d 'Write CSV (RFC 4180 quoting) instead of TSV'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l json -d 'Write JSON Lines, one object per row'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l no-header -d 'Leave out the header line'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l no-progress -d 'Never draw the progress line (it is drawn only when stderr is a terminal)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l ids -d 'Print locations and types as the stream\'s ids (the `loc` and `cat` columns, for joins with the stream) instead of their declared names'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l ignore-incomplete-links -d 'Drop links whose other half never comes, as pj_dump -z does, instead of failing (a warning counts them)'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -l lenient -d 'Skip invalid lines and elements with a warning each (and a count at the end) instead of stopping at the first'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c trace-stat -n "__fish_trace_stat_using_subcommand compare" -s V -l version -d 'Print version'

# The bash completions of every tracepipe command: source this file.
for _tracepipe_cmd in trace-cat trace-filter trace-match trace-slice trace-stat; do
  . "$(dirname "${BASH_SOURCE[0]}")/$_tracepipe_cmd.bash"
done
unset _tracepipe_cmd

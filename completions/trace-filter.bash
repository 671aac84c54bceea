_trace__filter() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="trace__filter"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        trace__filter)
            opts="-f -q -l -L -o -t -k -c -n -a -v -h -V --input-format --quiet --strict --prefix-inputs --loc --loc-name --under --output --output-format --list-formats --json --no-header --rows-only --unit --line-buffered --no-progress --threads --kind --cat --name --from --to --attr --invert --partition-by --row-group --ignore-incomplete-links --reorder-window --time-unit --precision --user-fields --pallas-codec --otf2-window --lenient --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input-format)
                    COMPREPLY=($(compgen -W "tsv jsonl parquet paje pallas otf2 trace paraver stf stf-dump chrome" -- "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -W "tsv jsonl parquet paje pallas otf2 trace paraver stf stf-dump chrome" -- "${cur}"))
                    return 0
                    ;;
                --loc)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --loc-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --under)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "tsv jsonl parquet paje pjdump pallas otf2 trace paraver stf stf-single chrome perfetto" -- "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -W "tsv jsonl parquet paje pjdump pallas otf2 trace paraver stf stf-single chrome perfetto" -- "${cur}"))
                    return 0
                    ;;
                --unit)
                    COMPREPLY=($(compgen -W "ns us ms s" -- "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kind)
                    COMPREPLY=($(compgen -W "meta container enter leave state event send recv msg coll counter claim dep signal type destroy" -- "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -W "meta container enter leave state event send recv msg coll counter claim dep signal type destroy" -- "${cur}"))
                    return 0
                    ;;
                --cat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --attr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition-by)
                    COMPREPLY=($(compgen -W "loc kind" -- "${cur}"))
                    return 0
                    ;;
                --row-group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reorder-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-unit)
                    COMPREPLY=($(compgen -W "s ms us ns" -- "${cur}"))
                    return 0
                    ;;
                --precision)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pallas-codec)
                    COMPREPLY=($(compgen -W "none zstd masking zstd-masking" -- "${cur}"))
                    return 0
                    ;;
                --otf2-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _trace__filter -o nosort -o bashdefault -o default trace-filter
else
    complete -F _trace__filter -o bashdefault -o default trace-filter
fi

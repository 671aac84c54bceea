_trace__stat() {
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
                cmd="trace__stat"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        trace__stat)
            opts="-f -q -l -L -o -h -V --input-format --quiet --strict --prefix-inputs --loc --loc-name --under --output --csv --json --no-header --no-progress --threads --by --histogram --matrix --count --time --inclusive --per-location --kinds --bins --bin --segments --states --wide --partial --merge --ids --top --unit --ignore-incomplete-links --reorder-window --time-unit --lenient --help --version profile messages counters states resources summary imbalance timeline waits critical-path"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input-format)
                    COMPREPLY=($(compgen -W "tsv jsonl paje pallas otf2 trace stf stf-dump" -- "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -W "tsv jsonl paje pallas otf2 trace stf stf-dump" -- "${cur}"))
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
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by)
                    COMPREPLY=($(compgen -W "name loc,name cat,name loc pair comm pattern loc,pattern name,pattern pair,pattern" -- "${cur}"))
                    return 0
                    ;;
                --histogram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kinds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bins)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unit)
                    COMPREPLY=($(compgen -W "ns us ms s" -- "${cur}"))
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
    complete -F _trace__stat -o nosort -o bashdefault -o default trace-stat
else
    complete -F _trace__stat -o bashdefault -o default trace-stat
fi

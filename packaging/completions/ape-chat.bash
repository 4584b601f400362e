_ape__chat() {
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
                cmd="ape__chat"
                ;;
            ape__chat,bench)
                cmd="ape__chat__subcmd__bench"
                ;;
            ape__chat,cache)
                cmd="ape__chat__subcmd__cache"
                ;;
            ape__chat,calibrate)
                cmd="ape__chat__subcmd__calibrate"
                ;;
            ape__chat,completions)
                cmd="ape__chat__subcmd__completions"
                ;;
            ape__chat,convert)
                cmd="ape__chat__subcmd__convert"
                ;;
            ape__chat,doctor)
                cmd="ape__chat__subcmd__doctor"
                ;;
            ape__chat,eval)
                cmd="ape__chat__subcmd__eval"
                ;;
            ape__chat,eval-docs)
                cmd="ape__chat__subcmd__eval__subcmd__docs"
                ;;
            ape__chat,help)
                cmd="ape__chat__subcmd__help"
                ;;
            ape__chat,index)
                cmd="ape__chat__subcmd__index"
                ;;
            ape__chat,man)
                cmd="ape__chat__subcmd__man"
                ;;
            ape__chat,serve)
                cmd="ape__chat__subcmd__serve"
                ;;
            ape__chat,watch)
                cmd="ape__chat__subcmd__watch"
                ;;
            ape__chat__subcmd__bench,compete)
                cmd="ape__chat__subcmd__bench__subcmd__compete"
                ;;
            ape__chat__subcmd__bench,context)
                cmd="ape__chat__subcmd__bench__subcmd__context"
                ;;
            ape__chat__subcmd__bench,first-answer)
                cmd="ape__chat__subcmd__bench__subcmd__first__subcmd__answer"
                ;;
            ape__chat__subcmd__bench,follow-ups)
                cmd="ape__chat__subcmd__bench__subcmd__follow__subcmd__ups"
                ;;
            ape__chat__subcmd__bench,frontier)
                cmd="ape__chat__subcmd__bench__subcmd__frontier"
                ;;
            ape__chat__subcmd__bench,help)
                cmd="ape__chat__subcmd__bench__subcmd__help"
                ;;
            ape__chat__subcmd__bench,index)
                cmd="ape__chat__subcmd__bench__subcmd__index"
                ;;
            ape__chat__subcmd__bench,retrieval)
                cmd="ape__chat__subcmd__bench__subcmd__retrieval"
                ;;
            ape__chat__subcmd__bench,store)
                cmd="ape__chat__subcmd__bench__subcmd__store"
                ;;
            ape__chat__subcmd__bench,suite)
                cmd="ape__chat__subcmd__bench__subcmd__suite"
                ;;
            ape__chat__subcmd__bench,ttft)
                cmd="ape__chat__subcmd__bench__subcmd__ttft"
                ;;
            ape__chat__subcmd__bench__subcmd__help,compete)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__compete"
                ;;
            ape__chat__subcmd__bench__subcmd__help,context)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__context"
                ;;
            ape__chat__subcmd__bench__subcmd__help,first-answer)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__first__subcmd__answer"
                ;;
            ape__chat__subcmd__bench__subcmd__help,follow-ups)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__follow__subcmd__ups"
                ;;
            ape__chat__subcmd__bench__subcmd__help,frontier)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__frontier"
                ;;
            ape__chat__subcmd__bench__subcmd__help,help)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__help"
                ;;
            ape__chat__subcmd__bench__subcmd__help,index)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__index"
                ;;
            ape__chat__subcmd__bench__subcmd__help,retrieval)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__retrieval"
                ;;
            ape__chat__subcmd__bench__subcmd__help,store)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__store"
                ;;
            ape__chat__subcmd__bench__subcmd__help,suite)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__suite"
                ;;
            ape__chat__subcmd__bench__subcmd__help,ttft)
                cmd="ape__chat__subcmd__bench__subcmd__help__subcmd__ttft"
                ;;
            ape__chat__subcmd__cache,clear)
                cmd="ape__chat__subcmd__cache__subcmd__clear"
                ;;
            ape__chat__subcmd__cache,gc)
                cmd="ape__chat__subcmd__cache__subcmd__gc"
                ;;
            ape__chat__subcmd__cache,help)
                cmd="ape__chat__subcmd__cache__subcmd__help"
                ;;
            ape__chat__subcmd__cache,stats)
                cmd="ape__chat__subcmd__cache__subcmd__stats"
                ;;
            ape__chat__subcmd__cache__subcmd__help,clear)
                cmd="ape__chat__subcmd__cache__subcmd__help__subcmd__clear"
                ;;
            ape__chat__subcmd__cache__subcmd__help,gc)
                cmd="ape__chat__subcmd__cache__subcmd__help__subcmd__gc"
                ;;
            ape__chat__subcmd__cache__subcmd__help,help)
                cmd="ape__chat__subcmd__cache__subcmd__help__subcmd__help"
                ;;
            ape__chat__subcmd__cache__subcmd__help,stats)
                cmd="ape__chat__subcmd__cache__subcmd__help__subcmd__stats"
                ;;
            ape__chat__subcmd__help,bench)
                cmd="ape__chat__subcmd__help__subcmd__bench"
                ;;
            ape__chat__subcmd__help,cache)
                cmd="ape__chat__subcmd__help__subcmd__cache"
                ;;
            ape__chat__subcmd__help,calibrate)
                cmd="ape__chat__subcmd__help__subcmd__calibrate"
                ;;
            ape__chat__subcmd__help,completions)
                cmd="ape__chat__subcmd__help__subcmd__completions"
                ;;
            ape__chat__subcmd__help,convert)
                cmd="ape__chat__subcmd__help__subcmd__convert"
                ;;
            ape__chat__subcmd__help,doctor)
                cmd="ape__chat__subcmd__help__subcmd__doctor"
                ;;
            ape__chat__subcmd__help,eval)
                cmd="ape__chat__subcmd__help__subcmd__eval"
                ;;
            ape__chat__subcmd__help,eval-docs)
                cmd="ape__chat__subcmd__help__subcmd__eval__subcmd__docs"
                ;;
            ape__chat__subcmd__help,help)
                cmd="ape__chat__subcmd__help__subcmd__help"
                ;;
            ape__chat__subcmd__help,index)
                cmd="ape__chat__subcmd__help__subcmd__index"
                ;;
            ape__chat__subcmd__help,man)
                cmd="ape__chat__subcmd__help__subcmd__man"
                ;;
            ape__chat__subcmd__help,serve)
                cmd="ape__chat__subcmd__help__subcmd__serve"
                ;;
            ape__chat__subcmd__help,watch)
                cmd="ape__chat__subcmd__help__subcmd__watch"
                ;;
            ape__chat__subcmd__help__subcmd__bench,compete)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__compete"
                ;;
            ape__chat__subcmd__help__subcmd__bench,context)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__context"
                ;;
            ape__chat__subcmd__help__subcmd__bench,first-answer)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__first__subcmd__answer"
                ;;
            ape__chat__subcmd__help__subcmd__bench,follow-ups)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__follow__subcmd__ups"
                ;;
            ape__chat__subcmd__help__subcmd__bench,frontier)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__frontier"
                ;;
            ape__chat__subcmd__help__subcmd__bench,index)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__index"
                ;;
            ape__chat__subcmd__help__subcmd__bench,retrieval)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__retrieval"
                ;;
            ape__chat__subcmd__help__subcmd__bench,store)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__store"
                ;;
            ape__chat__subcmd__help__subcmd__bench,suite)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__suite"
                ;;
            ape__chat__subcmd__help__subcmd__bench,ttft)
                cmd="ape__chat__subcmd__help__subcmd__bench__subcmd__ttft"
                ;;
            ape__chat__subcmd__help__subcmd__cache,clear)
                cmd="ape__chat__subcmd__help__subcmd__cache__subcmd__clear"
                ;;
            ape__chat__subcmd__help__subcmd__cache,gc)
                cmd="ape__chat__subcmd__help__subcmd__cache__subcmd__gc"
                ;;
            ape__chat__subcmd__help__subcmd__cache,stats)
                cmd="ape__chat__subcmd__help__subcmd__cache__subcmd__stats"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        ape__chat)
            opts="-h -V --ask --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --no-stream --json --conversation --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help --version doctor index completions man eval eval-docs calibrate convert watch serve cache bench help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --ask)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conversation)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help ttft suite context retrieval first-answer follow-ups store frontier index compete help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__compete)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__context)
            opts="-h --tokens --chunk-tokens --decode-tokens --repeats --sequential-max --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --out --json --from --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decode-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sequential-max)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__first__subcmd__answer)
            opts="-h --question --second --background-s --json --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --question)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --second)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --background-s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__follow__subcmd__ups)
            opts="-h --squad --pairs --json --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --squad)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pairs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__frontier)
            opts="-h --eval --ttft --svg --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --eval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttft)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --svg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help)
            opts="ttft suite context retrieval first-answer follow-ups store frontier index compete help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__compete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__context)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__first__subcmd__answer)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__follow__subcmd__ups)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__frontier)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__index)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__retrieval)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__store)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__suite)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__help__subcmd__ttft)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__index)
            opts="-h --vector-sample --state-sample --json --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --vector-sample)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-sample)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__retrieval)
            opts="-h --squad --questions --k --vectors --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --squad)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --questions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vectors)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__store)
            opts="-h --question --json --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --question)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__suite)
            opts="-h --chunks --chunk-tokens --decode-tokens --repeats --index-folder --out --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --chunks)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decode-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-folder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__bench__subcmd__ttft)
            opts="-h --chunks --chunk-tokens --decode-tokens --repeats --under-load --no-flash-baseline --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --chunks)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decode-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help stats gc clear help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__clear)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__gc)
            opts="-h --budget-gb --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__help)
            opts="stats gc clear help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__help__subcmd__clear)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__help__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__help__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__cache__subcmd__stats)
            opts="-h --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__calibrate)
            opts="-h --dataset --objective --search --accept --report --prefix-newlines --max-tokens --style --system-prompt --dry-run --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dataset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --objective)
                    COMPREPLY=($(compgen -W "f1 nll attention" -- "${cur}"))
                    return 0
                    ;;
                --search)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --accept)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --report)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --style)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__completions)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__convert)
            opts="-h --from --squad --out --contexts --unanswerable --pairs --seed --limit --exclude --articles --interleave --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -W "squad" -- "${cur}"))
                    return 0
                    ;;
                --squad)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --contexts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --articles)
                    COMPREPLY=($(compgen -W "all evaluation calibration" -- "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__doctor)
            opts="-h --json --steps --state-store --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__eval)
            opts="-h --dataset --modes --style --limit --max-tokens --results --state-format --against-state-format --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --system-prompt --prefix-newlines --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dataset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --modes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --style)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --results)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-format)
                    COMPREPLY=($(compgen -W "compact f16" -- "${cur}"))
                    return 0
                    ;;
                --against-state-format)
                    COMPREPLY=($(compgen -W "compact f16" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__eval__subcmd__docs)
            opts="-h --questions --root --python-root --half --settings --limit --results --svg --retrieval-only --json --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --questions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --half)
                    COMPREPLY=($(compgen -W "tune report all" -- "${cur}"))
                    return 0
                    ;;
                --settings)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --results)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --svg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help)
            opts="doctor index completions man eval eval-docs calibrate convert watch serve cache bench help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench)
            opts="ttft suite context retrieval first-answer follow-ups store frontier index compete"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__compete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__context)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__first__subcmd__answer)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__follow__subcmd__ups)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__frontier)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__index)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__retrieval)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__store)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__suite)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__bench__subcmd__ttft)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__cache)
            opts="stats gc clear"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__cache__subcmd__clear)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__cache__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__cache__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__calibrate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__convert)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__doctor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__eval)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__eval__subcmd__docs)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__index)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__help__subcmd__watch)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__index)
            opts="-h --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --no-states --json --dry-run --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__man)
            opts="-h --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__serve)
            opts="-v -h --host --port --api-key --timeout --queue --cors --allowed-host --idle-timeout --max-connections --shutdown-timeout --max-request-chunks --metrics --verbose --max-body --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --quality --mode --temperature-ape --scale-ape --reread --reread-window --reread-sentences --reread-echo --focus --doubt --recompute --top-k --file --retrieval --max-tokens --temperature --seed --stop --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --api-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cors)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allowed-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shutdown-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-request-chunks)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-body)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quality)
                    COMPREPLY=($(compgen -W "fast balanced exact" -- "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "sequential sequential-stored pcw parallel ape ape-t" -- "${cur}"))
                    return 0
                    ;;
                --temperature-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scale-ape)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reread-sentences)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --reread-echo)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --focus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doubt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --recompute)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retrieval)
                    COMPREPLY=($(compgen -W "hybrid bm25 dense" -- "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ape__subcmd__chat__subcmd__watch)
            opts="-h --chunk-tokens --system-prompt --prefix-newlines --embed-model --ort-lib --include --exclude --all-files --cache-budget-gb --extract-memory-gb --state-store --extract-timeout --debounce-ms --json --model --threads --kv-type --gpu-layers --memory-budget-gb --preload --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --chunk-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system-prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-newlines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ort-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-memory-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extract-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --debounce-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kv-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu-layers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --memory-budget-gb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preload)
                    COMPREPLY=($(compgen -W "auto on off" -- "${cur}"))
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
    complete -F _ape__chat -o nosort -o bashdefault -o default ape-chat
else
    complete -F _ape__chat -o bashdefault -o default ape-chat
fi

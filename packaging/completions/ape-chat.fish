# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ape_chat_global_optspecs
    string join \n ask= quality= mode= temperature-ape= scale-ape= reread= reread-window= reread-sentences= reread-echo= focus= doubt= recompute= top-k= file= retrieval= max-tokens= temperature= seed= stop= no-stream json conversation= chunk-tokens= system-prompt= prefix-newlines= embed-model= ort-lib= include= exclude= all-files cache-budget-gb= extract-memory-gb= state-store= extract-timeout= model= threads= kv-type= gpu-layers= memory-budget-gb= preload= h/help V/version
end

function __fish_ape_chat_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ape_chat_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ape_chat_using_subcommand
    set -l cmd (__fish_ape_chat_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ape-chat -n "__fish_ape_chat_needs_command" -l ask -d 'Ask one question about DIR, stream the answer, print the sources. `-` reads the question from stdin' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l conversation -d 'With --ask: continue the conversation in FILE (JSON: the earlier turns as [{"question", "answer"}…] or chat messages), and add this turn to it. A missing file starts a new conversation' -r -F
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l no-stream -d 'With --ask: print the answer only when complete'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l json -d 'With --ask: JSON Lines on stdout: `token`, `answer`, `sources`, `stats` records'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -s V -l version -d 'Print version'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "doctor" -d 'Check a GGUF model: architecture, APE support, and the engine\'s exactness and APE-attention checks run on it'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "index" -d 'Index a folder: chunks, BM25, vectors and every chunk\'s KV state, incrementally (unchanged files cost nothing)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "man" -d 'Print the man page (roff)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "eval" -d 'Answer a dataset in several modes and score it (EM, F1, contains, speed)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "eval-docs" -d 'Answer questions over real documentation folders, indexed as a user would, in several settings: right or wrong, paired against the first, timed with states cached'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "calibrate" -d 'Find the prefix variant, T and S that suit the model, and save them for it (used from then on by --ask, the TUI and eval)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "convert" -d 'Turn a dataset into eval records (SQuAD v2: gold paragraph + distractors from its article)'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "watch" -d 'Keep a folder\'s index and KV states current as files change'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "serve" -d 'Serve the folder over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/models, /health), indexing and watching it meanwhile'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "cache" -d 'Inspect or trim the KV-state cache'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "bench" -d 'Measure speed side by side in one run'
complete -c ape-chat -n "__fish_ape_chat_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l steps -d 'Greedy steps compared in the exactness check' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l state-store -d 'Also check this shared state store: reachable, writable, one real chunk state written, read back and checked, and how long each took' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -l json -d 'Print one JSON object instead of the report'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l no-states -d 'Index text and vectors only; KV states are encoded when an answer first needs them'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l json -d 'Print the report as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -l dry-run -d 'List what would be read (chunks and tokens per file) and what is passed over and why, with what reading it would cost; index nothing'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l dataset -d 'JSON Lines of {"id", "question", "contexts": [...], "answers": [...]}' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l modes -d 'Modes to compare, comma-separated, sequential first (the baseline): `sequential` (the chunks best last, nearest the question), `sequential-stored` (in the record\'s order: the reading-order control), `pcw`, `parallel`, `ape`, `ape-t` (temperature only, S = 1) and `ape:t=0.8:s=1:reread=1:window=48:focus=3` (APE with these values; others as for `ape`; `ape:t=1:s=1:reread=1` is parallel + re-read; `window` re-reads only the best window of that many tokens). The default is the paper\'s ablation' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l style -d 'Instruction appended to every question, e.g. "Answer with a short phrase." (so EM/F1 measure content rather than verbosity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l limit -d 'Evaluate only the first N records' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l max-tokens -d 'Longest answer in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l results -d 'Predictions file; re-running with it resumes, and rows made with the same mode (and T, S) for the same record content are reused [default: in the cache dir, keyed by model, prompt, --max-tokens and state format; rows carry their record\'s content hash]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l state-format -d 'How chunk states are stored and read back: `compact` (what ape-chat stores: K q8_0, V q6_K) or `f16` (llama.cpp\'s bytes as they are)' -r -f -a "compact\t''
f16\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l against-state-format -d 'Also compare every cached mode with the rows of an earlier run of this dataset and these settings made with the other state format (paired by record, clustered by article)' -r -f -a "compact\t''
f16\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -l json -d 'Print the summary and every prediction as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l questions -d 'JSON Lines of {"id", "docs" (optional: "python3"), "folder", "file", "question", "answer" (a regular expression), "evidence", "gold" (optional)} (assets/eval/docs/questions.jsonl)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l root -d 'The folder rustup\'s documentation is in, which the questions\' folders are under unless they name another tree: "$(rustc --print sysroot)/share/doc/rust/html"' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l python-root -d 'The folder Debian\'s python3-doc is in, for questions with `"docs": "python3"` (scripts/setup.sh installs it)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l half -d 'Which half to answer, by page: `tune` (to choose settings on), `report` (to judge them on), `all`' -r -f -a "tune\t''
report\t''
all\t'Both halves (for the smoke slice and for looking, never for choosing)'"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l settings -d 'Settings to compare, comma-separated, the baseline first: `exact`, `fast`, `balanced` (as --quality resolves them) or a mode (`ape:t=…:s=…:reread=…:window=…`, `parallel`, …)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l limit -d 'Answer only the first N questions of the half' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l results -d 'Rows file; a rerun with it answers only what is missing [default: docs.jsonl in the cache\'s eval dir]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l svg -d 'Also draw the settings\' accuracy against their speedup to this SVG' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l retrieval-only -d 'Retrieval alone: index each folder to text and vectors and say, per half, how often the question\'s page is among the chunks an answer would read; answer nothing'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l json -d 'Print the summary and every row as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand eval-docs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l dataset -d 'Records to calibrate on, JSON Lines as for `eval` (`answers` may be empty for `--objective attention`). Split by source into search, accept and report parts that never share a paragraph' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l objective -d 'What to optimise: answer F1, gold-answer NLL, or attention matching against sequential prefill (needs no answers)' -r -f -a "f1\t'Greedy answers\' token F1 (ties broken by gold-answer NLL)'
nll\t'Mean per-token NLL of the gold answers'
attention\t'KL(sequential ‖ APE) of the question\'s attention; needs no answers'"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l search -d 'Records the search runs on' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l accept -d 'Records that decide between the found setting and the defaults' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l report -d 'Records the before/after figures are measured on (no choice uses them)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l prefix-newlines -d 'Prefix variants to try: newline tokens appended to the shared prefix' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l max-tokens -d 'Longest answer in tokens (F1 objective and the figures)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l style -d 'Instruction appended to every question, as `eval --style`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l system-prompt -d 'System prompt of the shared prefix [default: config, then built-in]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l dry-run -d 'Show the result without writing the config file'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -l json -d 'Print the result as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand calibrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l from -d 'The dataset to convert' -r -f -a "squad\t'SQuAD v2 (`scripts/setup.sh --eval-data`)'"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l squad -d 'SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l out -d 'Output JSON Lines file' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l contexts -d 'Contexts per record: the question\'s paragraph (a pair\'s two) plus others from its article' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l seed -d 'Seed for distractor choice and order' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l limit -d 'Keep N records, spread evenly over the dataset' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l exclude -d 'Leave out the questions of this dataset (so a calibration set and an evaluation set never share a question)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l articles -d 'Which articles to draw on: every fourth is kept for calibration, the rest for evaluation, so the two sets never share a paragraph' -r -f -a "all\t''
evaluation\t''
calibration\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l unanswerable -d 'Also keep unanswerable questions'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l pairs -d 'Ask two questions of one article at once, their answers in different paragraphs: records whose answer needs two contexts (it counts as contained only with both parts)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -l interleave -d 'Order the records round-robin over their articles, so that any first N (`eval --limit N`, or a run stopped early) span many articles'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand convert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l debounce-ms -d 'Quiet time after the last change before re-indexing' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -l json -d 'JSON Lines on stdout: `update` records (index reports) and `error`s'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l host -d 'Address to listen on (anything but loopback needs --api-key)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l port -d 'Port to listen on (0: any free port, printed at start)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l api-key -d 'Require `Authorization: Bearer KEY` on /v1/ requests' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l timeout -d 'Seconds a client may take to send its request body' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l queue -d 'Questions that may wait for the model; more are refused with 429' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l cors -d 'Allow browsers from ORIGIN (repeatable; `*` for any): CORS is off unless asked for, and pages from other origins are refused (403)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l allowed-host -d 'Also answer requests that name this server as NAME (repeatable; `*` for any): besides localhost and the bound address, a Host header must be listed (DNS rebinding protection)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l idle-timeout -d 'Seconds a connection may stay open with no request in progress (a request header still arriving, or kept alive between requests)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l max-connections -d 'Open connections at most: past it the longest-open idle one is closed, and if every one is busy the new one gets 503' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l shutdown-timeout -d 'Seconds requests in progress may go on after Ctrl-C or SIGTERM before they are cut and the server exits' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l max-request-chunks -d 'Most chunks one request may read, its `top_k` (or `"all"`) and `files` together: more is refused with 400, so one request cannot hold the model for minutes [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l max-body -d 'Largest request body in bytes' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l metrics -d 'Serve Prometheus metrics at /metrics (requests, queue, time to first token, decode speed, states, indexing), as llama-server\'s --metrics'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -s v -l verbose -d 'Log each refused request and the request fields that were ignored'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -f -a "stats" -d 'Entries and bytes, and how many an index still refers to'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -f -a "gc" -d 'Remove leftovers and unreferenced states, then evict least-recently used ones beyond the budget'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -f -a "clear" -d 'Remove every cached state (indexes re-encode them on their next update)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and not __fish_seen_subcommand_from stats gc clear help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -l json
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l budget-gb -d 'Budget in GB [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -l json
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "stats" -d 'Entries and bytes, and how many an index still refers to'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "gc" -d 'Remove leftovers and unreferenced states, then evict least-recently used ones beyond the budget'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "clear" -d 'Remove every cached state (indexes re-encode them on their next update)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "ttft" -d 'Time to first token and decode speed, every mode side by side (state files read cold and warm, mode order rotated, medians of repeats)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "suite" -d 'Every speed figure side by side: TTFT and decode per mode for 5–40 chunks, chunk encoding, state loading, state size (in memory vs at rest), indexing; writes JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "context" -d 'What reading more costs: TTFT and decode speed of APE (fast and balanced) over 8K–128K cached tokens on shared positions, past the window, beside sequential prefill where it fits; JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "retrieval" -d 'Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense, plus brute-force vector search latency at scale'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "first-answer" -d 'A new folder\'s first answer: model load, BM25 ready, first token of a first question (states encoded on demand), then with states cached and while background indexing has work left'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "follow-ups" -d 'Does the conversation help a follow-up? Two-turn SQuAD v2 pairs (the second question refers back with a pronoun): recall@k and "contains", the follow-up alone against after its first turn'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "store" -d 'What a shared state store (`--state-store`) saves: per question, TTFT with its states encoded, fetched from the store into an empty cache, and read from the local disk cold; the store\'s read speed'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "frontier" -d 'Fast and right: joins an `eval --json` and a `bench ttft --json` report into each mode\'s likelihood retention against its speedup, marks the frontier and the modes that clear the default\'s bar, and draws the chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "index" -d 'How long a folder takes to be ready, stage by stage: files, chunks and tokens read with the documents-only rules and with every text file, scan and read times, vectors with one thread and every core, state encoding, and the time to every state cached'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "compete" -d 'Keeps the cores busy as another llama.cpp program would (prefill on the model, llama.cpp\'s default polling) until stdin closes: what `ttft --under-load` runs beside itself, or to try ape-chat under load by hand'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and not __fish_seen_subcommand_from ttft suite context retrieval first-answer follow-ups store frontier index compete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l chunks -d 'Number of retrieved chunks' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l chunk-tokens -d 'Tokens per chunk' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l decode-tokens -d 'Tokens decoded per mode for the decode-speed figures' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l repeats -d 'Interleaved repeats per mode (order rotated); medians are reported' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l under-load -d 'Time every mode again while a second process (this program on the same model and threads, as llama.cpp\'s tools run) computes'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l no-flash-baseline -d 'Leave out sequential prefill with flash attention on (timed by default: the fair baseline is the faster sequential prefill)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -l json -d 'Print one JSON object instead of the table'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from ttft" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l chunks -d 'Numbers of retrieved chunks to time, comma-separated' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l chunk-tokens -d 'Tokens per chunk' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l decode-tokens -d 'Tokens decoded per mode for the decode-speed figures' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l repeats -d 'Interleaved repeats per mode and size (order rotated); medians' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l index-folder -d 'Folder to time indexing on (into a scratch index and cache) [default: the README\'s sample folder, if present]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l out -d 'Where `bench-suite.json` and `bench-suite.svg` go' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -l json -d 'Print the report as JSON on stdout too'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from suite" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l tokens -d 'Cached tokens per question to time, comma-separated' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l chunk-tokens -d 'Tokens per chunk' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l decode-tokens -d 'Tokens decoded per mode for the decode speed' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l repeats -d 'Interleaved repeats per mode and size (order rotated); medians' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l sequential-max -d 'Time sequential prefill (flash attention on) up to this many tokens (never past the window: it cannot read further)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l out -d 'Where `bench-context.json` and `bench-context.svg` go' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l from -d 'Measure nothing: draw the chart (beside the file) and print the table of a saved `bench-context.json`, e.g. a GPU machine\'s' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -l json -d 'Print the report as JSON on stdout too'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from context" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l squad -d 'SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l questions -d 'Answerable questions evaluated (spread evenly over the dataset)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l k -d 'Recall cut-off' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l vectors -d 'Vectors in the synthetic brute-force search timing (0 skips it)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -l json -d 'Print one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from retrieval" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l question -d 'The first question' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l second -d 'The second question, asked while background indexing has work left (the first is also asked again while a state is being encoded)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l background-s -d 'Seconds of background indexing between the two questions' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l json -d 'Print the report as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from first-answer" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l squad -d 'SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l pairs -d 'Two-turn pairs (from the evaluation articles, spread over them)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l json -d 'Print the report as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from follow-ups" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l question -d 'A question (repeatable) [default: four about the sample documents]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l quality -d 'Speed against faithfulness to sequential prefill: `fast` (APE), `balanced` (APE, and the best chunk echoed from its cached states right before the question; re-read by prefill with --file, and on a GPU while that takes under 50 ms), `exact` (sequential prefill) [default: balanced]' -r -f -a "fast\t''
balanced\t''
exact\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l mode -d 'How retrieved chunks reach the model, overriding --quality' -r -f -a "sequential\t''
sequential-stored\t''
pcw\t''
parallel\t''
ape\t''
ape-t\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l temperature-ape -d 'APE attention temperature T for chunk tokens [default: 0.9, or what is calibrated for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l scale-ape -d 'APE scaling factor S of the chunks\' attention mass [default: 0.9]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l reread -d 'Re-read the N best chunks sequentially before the question (costs their prefill) [default: 0, or what is shipped for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l reread-window -d 'Re-read only the best N-token window of each re-read chunk, keeping the whole chunk in the parallel block [default: 0 = whole chunks]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l reread-sentences -d 'Make the re-read window whole sentences, as many as fit in its N tokens (`--reread-sentences=false`: any run of N tokens)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l reread-echo -d 'Echo the re-read text from its cached cells, moved right before the question, instead of prefilling it: no prefill, the chunk stays in the parallel block (`--reread-echo=false`: prefill it)' -r -f -a "true\t''
false\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l focus -d 'Each attention row keeps only its N strongest chunks [default: 0 = all]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l doubt -d 'Begin the answer again with sequential prefill when its first tokens\' mean log-probability is below this (e.g. -0.5) [default: never]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l recompute -d 'Selective recomputation instead of APE: the cached states moved to sequential prefill\'s layout and this percentage of their tokens, the ones the question attends to most, decoded again (100: sequential prefill) [default: off]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l top-k -d 'Chunks read per question: the K best, or `all` (under fast and balanced every chunk shares the same positions, so K may reach past the model\'s window; memory is the limit) [default: 5]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l file -d 'Also read this file whole, every chunk in document order (a path relative to the folder; repeatable)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l retrieval -d 'How chunks are ranked: BM25 and vectors fused, or either alone' -r -f -a "hybrid\t''
bm25\t''
dense\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l max-tokens -d 'Longest answer, in tokens' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l temperature -d 'Sampling temperature; 0 picks the most likely token (deterministic)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l seed -d 'Seed for sampling' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l stop -d 'End the answer before this text (repeatable), wherever it appears, however the tokens split it: as a request\'s `stop`' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l json -d 'Print the report as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from store" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l eval -d '`ape-chat eval --json` output (likelihood retention against fair sequential prefill, with intervals)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l ttft -d '`ape-chat bench ttft --json` output on the same model and settings. Repeatable, for modes timed in other runs of the same workload: a mode\'s speedup comes from the first report that times it (a ratio within one run)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l svg -d 'Write the chart here (SVG)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -l json -d 'Print the joined points as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from frontier" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l vector-sample -d 'Chunks embedded with each thread count' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l state-sample -d 'Chunks whose state is encoded' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l chunk-tokens -d 'Target chunk size in model tokens [default: 256]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l system-prompt -d 'System prompt; part of the prefix every chunk state is encoded after' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l prefix-newlines -d 'Newline tokens appended to the prefix before the chunks [default: 0, or what `ape-chat calibrate` chose for the model]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l embed-model -d 'Sentence-embedding model directory (ONNX + tokenizer files)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l ort-lib -d 'ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24)' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l include -d 'Only index files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l exclude -d 'Skip files matching this glob (repeatable; gitignore syntax)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l cache-budget-gb -d 'KV-state cache budget in GB; least-recently-used states beyond it are evicted after each index update [default: 20]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l extract-memory-gb -d 'Memory, in GB, one PDF, Office or EPUB file may take to be read (in a worker process; past it the file is skipped, with the reason)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l state-store -d 'A shared store of chunk states behind the local cache (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states missing here are read from it, states encoded here are offered to it' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l extract-timeout -d 'Seconds one PDF, Office or EPUB file may take to be read' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l json -d 'Print the report as one JSON object'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -l all-files -d 'Read every text file, not only documents: by default a web site\'s own scripts and style sheets, SVG images, search indexes, source maps, lock files and print copies of a site\'s pages are passed over (`index --dry-run` lists them; an --include glob reads what it matches)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l model -d 'GGUF model file [default: the model installed by scripts/setup.sh]' -r -F
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l threads -d 'CPU threads for llama.cpp [default: all cores]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l kv-type -d 'K cache type (part of every cached state\'s identity)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l gpu-layers -d 'Layers to offload to the GPU (CUDA builds)' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l memory-budget-gb -d 'Memory in GB an answer\'s context may take (KV cells and attention scratch) [default: what is free when the answer starts]' -r
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -l preload -d 'Load the folder\'s cached chunk states into memory once it is indexed (TUI and server), so that first questions read nothing from disk; only free room is used [default: auto, i.e. when the KV cache is on a GPU]' -r -f -a "auto\t'When the KV cache is in GPU memory: there `fast` over 8K cached tokens started in 39 ms with its states in GPU memory against 198 ms from cold files (docs/results.md, "Cost vs context", H100); on the CPU the page cache already keeps what was read, and RAM is the user\'s'
on\t''
off\t''"
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from compete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "ttft" -d 'Time to first token and decode speed, every mode side by side (state files read cold and warm, mode order rotated, medians of repeats)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "suite" -d 'Every speed figure side by side: TTFT and decode per mode for 5–40 chunks, chunk encoding, state loading, state size (in memory vs at rest), indexing; writes JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "context" -d 'What reading more costs: TTFT and decode speed of APE (fast and balanced) over 8K–128K cached tokens on shared positions, past the window, beside sequential prefill where it fits; JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "retrieval" -d 'Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense, plus brute-force vector search latency at scale'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "first-answer" -d 'A new folder\'s first answer: model load, BM25 ready, first token of a first question (states encoded on demand), then with states cached and while background indexing has work left'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "follow-ups" -d 'Does the conversation help a follow-up? Two-turn SQuAD v2 pairs (the second question refers back with a pronoun): recall@k and "contains", the follow-up alone against after its first turn'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "store" -d 'What a shared state store (`--state-store`) saves: per question, TTFT with its states encoded, fetched from the store into an empty cache, and read from the local disk cold; the store\'s read speed'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "frontier" -d 'Fast and right: joins an `eval --json` and a `bench ttft --json` report into each mode\'s likelihood retention against its speedup, marks the frontier and the modes that clear the default\'s bar, and draws the chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "index" -d 'How long a folder takes to be ready, stage by stage: files, chunks and tokens read with the documents-only rules and with every text file, scan and read times, vectors with one thread and every core, state encoding, and the time to every state cached'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "compete" -d 'Keeps the cores busy as another llama.cpp program would (prefill on the model, llama.cpp\'s default polling) until stdin closes: what `ttft --under-load` runs beside itself, or to try ape-chat under load by hand'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "doctor" -d 'Check a GGUF model: architecture, APE support, and the engine\'s exactness and APE-attention checks run on it'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "index" -d 'Index a folder: chunks, BM25, vectors and every chunk\'s KV state, incrementally (unchanged files cost nothing)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "man" -d 'Print the man page (roff)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "eval" -d 'Answer a dataset in several modes and score it (EM, F1, contains, speed)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "eval-docs" -d 'Answer questions over real documentation folders, indexed as a user would, in several settings: right or wrong, paired against the first, timed with states cached'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "calibrate" -d 'Find the prefix variant, T and S that suit the model, and save them for it (used from then on by --ask, the TUI and eval)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "convert" -d 'Turn a dataset into eval records (SQuAD v2: gold paragraph + distractors from its article)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "watch" -d 'Keep a folder\'s index and KV states current as files change'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "serve" -d 'Serve the folder over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/models, /health), indexing and watching it meanwhile'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "cache" -d 'Inspect or trim the KV-state cache'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "bench" -d 'Measure speed side by side in one run'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and not __fish_seen_subcommand_from doctor index completions man eval eval-docs calibrate convert watch serve cache bench help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from cache" -f -a "stats" -d 'Entries and bytes, and how many an index still refers to'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from cache" -f -a "gc" -d 'Remove leftovers and unreferenced states, then evict least-recently used ones beyond the budget'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from cache" -f -a "clear" -d 'Remove every cached state (indexes re-encode them on their next update)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "ttft" -d 'Time to first token and decode speed, every mode side by side (state files read cold and warm, mode order rotated, medians of repeats)'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "suite" -d 'Every speed figure side by side: TTFT and decode per mode for 5–40 chunks, chunk encoding, state loading, state size (in memory vs at rest), indexing; writes JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "context" -d 'What reading more costs: TTFT and decode speed of APE (fast and balanced) over 8K–128K cached tokens on shared positions, past the window, beside sequential prefill where it fits; JSON and an SVG chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "retrieval" -d 'Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense, plus brute-force vector search latency at scale'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "first-answer" -d 'A new folder\'s first answer: model load, BM25 ready, first token of a first question (states encoded on demand), then with states cached and while background indexing has work left'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "follow-ups" -d 'Does the conversation help a follow-up? Two-turn SQuAD v2 pairs (the second question refers back with a pronoun): recall@k and "contains", the follow-up alone against after its first turn'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "store" -d 'What a shared state store (`--state-store`) saves: per question, TTFT with its states encoded, fetched from the store into an empty cache, and read from the local disk cold; the store\'s read speed'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "frontier" -d 'Fast and right: joins an `eval --json` and a `bench ttft --json` report into each mode\'s likelihood retention against its speedup, marks the frontier and the modes that clear the default\'s bar, and draws the chart'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "index" -d 'How long a folder takes to be ready, stage by stage: files, chunks and tokens read with the documents-only rules and with every text file, scan and read times, vectors with one thread and every core, state encoding, and the time to every state cached'
complete -c ape-chat -n "__fish_ape_chat_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "compete" -d 'Keeps the cores busy as another llama.cpp program would (prefill on the model, llama.cpp\'s default polling) until stdin closes: what `ttft --under-load` runs beside itself, or to try ape-chat under load by hand'

//! The binary as a user runs it: doctor, bench, --ask, exit codes, messages.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::common::{
    ape_chat, files_under, gemma_model_path, json_lines, record, tiny_model_path, Succeed,
};

/// `ape-chat --ask QUESTION --json … sample_dir` on the tiny model; must succeed.
fn ask_json(cache: &Path, question: &str, extra: &[&str]) -> Vec<Value> {
    let out = ape_chat(cache)
        .args(["--ask", question, "--json"])
        .args(extra)
        .arg("--model")
        .arg(tiny_model_path())
        .arg(sample_dir())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "--json must keep stderr quiet");
    json_lines(&out.stdout)
}

fn sample_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"))
}

#[test]
fn doctor_passes_on_the_tiny_model() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args(["doctor", "--json", "--model"])
        .arg(tiny_model_path())
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["ok"], true);
    assert_eq!(r["info"]["architecture"], "llama");
    assert_eq!(r["ape_supported"], true);
    assert_eq!(
        r["modes"],
        serde_json::json!(["sequential", "pcw", "parallel", "ape"])
    );
    assert_eq!(r["template"], "the model's chat template");
    assert_eq!(r["exactness"]["result"]["parallel_vs_sequential"], 0.0);
    assert_eq!(r["recompute"]["passed"], true, "{}", r["recompute"]);
    assert_eq!(r["recompute"]["result"]["full_vs_sequential"], 0.0);
    assert!(
        r["ape_math"]["result"]["max_abs_error"]
            .as_f64()
            .expect("number")
            <= 1e-5
    );
    // On the CPU states are kept in RAM, and `auto` leaves it alone.
    assert_eq!(r["memory"]["tiers"][0]["tier"], "ram", "{}", r["memory"]);
    assert!(r["memory"]["tiers"][0]["budget_bytes"].as_u64() > Some(0));
    assert_eq!(r["memory"]["preload"], "auto");
    assert_eq!(r["memory"]["preloads"], false);
    let on = ape_chat(cache.path())
        .args(["doctor", "--json", "--preload", "on", "--model"])
        .arg(tiny_model_path())
        .succeed();
    let on: Value = serde_json::from_slice(&on.stdout).expect("json");
    assert_eq!(on["memory"]["preloads"], true, "{}", on["memory"]);
}

/// A model APE does not support (Gemma 3: sliding-window attention, no chat
/// template) still answers: by sequential prefill, with one note saying why,
/// and without encoding a single chunk state it would never use. Swapping
/// models on one folder leaves each model's states to itself.
#[test]
fn an_unsupported_model_answers_sequentially_and_says_why() {
    let cache = tempfile::tempdir().expect("tempdir");
    let tiny = || {
        let q = "How long are nightly snapshots kept?";
        ask_json(cache.path(), q, &["--max-tokens", "8", "--top-k", "2"])
    };
    let before = tiny();
    assert_eq!(record(&before, "stats")["states_encoded_on_demand"], 2);
    let tiny_states = files_under(&cache.path().join("kv"));

    let out = ape_chat(cache.path())
        .args(["--ask", "How long are nightly snapshots kept?", "--json"])
        .args([
            "--max-tokens",
            "8",
            "--top-k",
            "2",
            "--mode",
            "ape",
            "--model",
        ])
        .arg(gemma_model_path())
        .arg(sample_dir())
        .succeed();
    let lines = json_lines(&out.stdout);
    let stats = record(&lines, "stats");
    assert_eq!(stats["mode"], "sequential");
    let notes: Vec<&str> = stats["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("not available on this model") && n.contains("sequential")),
        "{notes:?}"
    );
    assert_eq!(stats["states_encoded_on_demand"], 0);
    assert_eq!(
        files_under(&cache.path().join("kv")),
        tiny_states,
        "no chunk state is encoded for a model that cannot use one"
    );
    assert_eq!(
        record(&lines, "sources")["sources"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Without --json the note reaches the user on stderr.
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            "Where are encryption keys kept?",
            "--max-tokens",
            "4",
        ])
        .arg("--model")
        .arg(gemma_model_path())
        .arg(sample_dir())
        .succeed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not available on this model"), "{err}");

    let after = tiny();
    assert_eq!(record(&after, "stats")["states_encoded_on_demand"], 0);
    assert_eq!(
        record(&after, "answer")["text"],
        record(&before, "answer")["text"]
    );

    let out = ape_chat(cache.path())
        .args(["doctor", "--json", "--model"])
        .arg(gemma_model_path())
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "doctor fails where APE is unsupported"
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["ape_supported"], false);
    assert_eq!(r["modes"], serde_json::json!(["sequential"]));
    assert!(
        r["template"]
            .as_str()
            .is_some_and(|t| t.starts_with("plain text")),
        "{}",
        r["template"]
    );
}

/// A base model in the plain layout has no end-of-turn token: its answer
/// ends at a blank line or a next "Question:", never running on into an
/// invented exchange.
#[test]
fn a_base_model_answer_ends_without_trailing_junk() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args(["--ask", "How long are nightly snapshots kept?", "--json"])
        .args(["--max-tokens", "96", "--model"])
        .arg(gemma_model_path())
        .arg(sample_dir())
        .succeed();
    let lines = json_lines(&out.stdout);
    let answer = record(&lines, "answer");
    let text = answer["text"].as_str().expect("text");
    assert_eq!(answer["stop"], "end_of_turn", "{text:?}");
    assert!(!text.trim().is_empty(), "{text:?}");
    assert!(
        !text.contains("Question") && !text.trim().contains("\n\n"),
        "{text:?}"
    );
}

#[test]
fn doctor_names_a_file_that_is_not_a_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bogus = dir.path().join("notes.gguf");
    std::fs::write(&bogus, "hello").expect("write");
    let out = ape_chat(dir.path())
        .args(["doctor", "--model"])
        .arg(&bogus)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("notes.gguf") && err.contains("not a GGUF"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(dir.path())
        .args(["--ask", "q", "--mode", "bogus"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = ape_chat(dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bench_reports_every_figure() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args([
            "bench",
            "ttft",
            "--chunks",
            "3",
            "--chunk-tokens",
            "48",
            "--decode-tokens",
            "4",
        ])
        .args(["--repeats", "1", "--json", "--model"])
        .arg(tiny_model_path())
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let modes = r["modes"].as_array().expect("modes");
    let names: Vec<&str> = modes.iter().filter_map(|m| m["mode"].as_str()).collect();
    assert_eq!(
        names,
        [
            "sequential",
            "pcw",
            "parallel",
            "ape (T=0.9, S=0.9)",
            "ape (T=0.9, S=0.9, re-read 1)",
            "ape (T=0.9, S=0.9, re-read 1 (echoed))",
            "ape (T=0.9, S=0.9, re-read 1 (window 32))",
            "ape (T=0.9, S=0.9, re-read 1 (window 48))",
            "ape (T=0.9, S=0.9, re-read 1 (window 64))",
            "ape (T=0.9, S=0.9, re-read 1 (window 48, sentences))",
            "sequential (flash attention)"
        ]
    );
    // Speedups are over the faster sequential prefill, whichever it is.
    let base = r["baseline"].as_str().expect("baseline");
    assert!(base == "sequential" || base == "sequential (flash attention)");
    assert_eq!(r["memory_tiers"], serde_json::json!(["ram"]));
    for m in modes {
        for key in [
            "ttft_ms",
            "ttft_min_ms",
            "ttft_warm_ms",
            "decode_tokens_per_s",
            "speedup",
        ] {
            assert!(m[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {m}");
        }
        let (min, median) = (m["ttft_min_ms"].as_f64(), m["ttft_ms"].as_f64());
        assert!(min <= median, "{m}");
    }
    // Cached modes read state files (cold, then warm) and also start from
    // the memory tier; sequential reads none.
    assert_eq!(modes[0]["read_ms"].as_f64(), Some(0.0));
    assert!(modes[0].get("read_split").is_none(), "{}", modes[0]);
    let fastest = modes
        .iter()
        .filter(|m| m["mode"] == base)
        .filter_map(|m| m["speedup"].as_f64())
        .next();
    assert_eq!(fastest, Some(1.0));
    for m in &modes[1..4] {
        let (read, load) = (m["read_ms"].as_f64(), m["load_ms"].as_f64());
        assert!(read.is_some_and(|r| r > 0.0) && read <= load, "{m}");
        // The read's split: compact files are read, checked and widened,
        // and the parts (medians each) stay within the whole.
        let split = &m["read_split"];
        let part = |k: &str| split[k].as_f64().unwrap_or(-1.0);
        assert!(part("file_ms") > 0.0 && part("decode_ms") > 0.0, "{m}");
        assert!(part("verify_ms") >= 0.0, "{m}");
        assert!(
            part("file_ms") + part("decode_ms") <= read.unwrap_or(0.0),
            "{m}"
        );
        assert!(
            m["read_split_warm"]["decode_ms"]
                .as_f64()
                .is_some_and(|d| d > 0.0),
            "{m}"
        );
        let ram = &m["memory"][0];
        assert_eq!(ram["tier"], "ram", "{m}");
        assert!(ram["ttft_ms"].as_f64().is_some_and(|x| x > 0.0), "{m}");
    }
    // SmolLM2-135M: 30 layers × 3 KV heads × 64 dims × (K + V) × 2 bytes
    // = 23,040 in memory (and 12 bytes of cell position); at most half that
    // at rest.
    let in_memory = r["state_bytes_per_token_in_memory"].as_f64().unwrap_or(0.0);
    assert!((23_040.0..23_100.0).contains(&in_memory), "{in_memory}");
    let at_rest = r["state_bytes_per_token"].as_f64().unwrap_or(0.0);
    assert!(at_rest > 0.0 && at_rest <= 0.5 * in_memory, "{at_rest}");
}

#[test]
fn bench_suite_writes_json_and_a_chart() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out_dir = cache.path().join("out");
    let out = ape_chat(cache.path())
        .args(["bench", "suite", "--chunks", "2,1", "--chunk-tokens", "32"])
        .args(["--decode-tokens", "2", "--json", "--out"])
        .arg(&out_dir)
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("bench-suite.json")).expect("json file"),
    )
    .expect("json");
    assert_eq!(r, written);
    let sizes: Vec<u64> = r["sizes"]
        .as_array()
        .expect("sizes")
        .iter()
        .filter_map(|p| p["chunks"].as_u64())
        .collect();
    assert_eq!(sizes, [1, 2], "sorted");
    for p in r["sizes"].as_array().expect("sizes") {
        let modes = p["modes"].as_array().expect("modes");
        assert_eq!(modes.len(), 6);
        assert!(modes
            .iter()
            .all(|m| m["speedup"].as_f64().is_some_and(|x| x > 0.0)));
    }
    let st = &r["states"];
    let (f16, at_rest) = (
        st["bytes_per_token_f16"].as_f64().unwrap_or(0.0),
        st["bytes_per_token_at_rest"].as_f64().unwrap_or(0.0),
    );
    // 30 layers × 2 × 192 f16 values, and 12 bytes of cell position.
    assert!((23_040.0..23_100.0).contains(&f16), "{st}");
    assert!(
        at_rest > 0.0 && at_rest <= 0.5 * f16,
        "compact at rest: {st}"
    );
    for key in ["file_read_cold_mb_per_s", "file_read_warm_mb_per_s"] {
        assert!(st[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {st}");
    }
    assert!(
        r["index"]["chunks"].as_u64().is_some_and(|n| n > 0),
        "{}",
        r["index"]
    );
    let svg = std::fs::read_to_string(out_dir.join("bench-suite.svg")).expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("sequential") && svg.contains("ape (T=0.9"));
    assert!(
        svg.contains("SmolLM2-135M-Instruct"),
        "the chart names the model"
    );
}

#[test]
fn ask_answers_in_every_mode_and_reuses_cached_states() {
    let cache = tempfile::tempdir().expect("tempdir");
    let ask = |mode: &str| {
        let q = "How long are nightly snapshots kept?";
        ask_json(
            cache.path(),
            q,
            &["--max-tokens", "24", "--mode", mode, "--top-k", "3"],
        )
    };
    // A cache made before ape-chat kept it private is tightened on start.
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let started = std::time::Instant::now();
    let first = ask("ape");
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(mode(cache.path()), 0o700, "the cache holds document text");
    let states = files_under(&cache.path().join("kv"));
    assert!(!states.is_empty());
    for f in states {
        assert_eq!(mode(&f), 0o600, "{}", f.display());
    }
    let stats = record(&first, "stats");
    assert_eq!(stats["mode"], "ape");
    assert_eq!(
        stats["states_encoded_on_demand"], 3,
        "a new folder: --ask indexes the text and encodes what it retrieved"
    );
    // The timings nest, and the whole fits inside the process's own run as
    // this test clocked it.
    let t = |key: &str| stats[key].as_f64().unwrap_or(f64::NAN);
    assert!(
        t("state_load_ms") + t("question_prefill_ms") <= t("prefill_to_first_token_ms"),
        "{stats}"
    );
    assert!(
        t("retrieval_ms") + t("state_prep_ms") + t("prefill_to_first_token_ms")
            <= t("ttft_ms") + 1e-6,
        "{stats}"
    );
    assert!(
        t("ttft_ms") > 0.0 && t("ttft_ms") < wall_ms,
        "{stats} in {wall_ms} ms"
    );
    assert!(t("decode_tokens_per_s") > 0.0, "{stats}");
    let sources = record(&first, "sources")["sources"]
        .as_array()
        .expect("sources")
        .clone();
    assert_eq!(sources.len(), 3);
    assert_eq!(sources[0]["path"], "backup-policy.md");
    assert!(sources[0]["bm25_rank"].is_u64() || sources[0]["dense_rank"].is_u64());
    let shares: Vec<f64> = sources
        .iter()
        .filter_map(|s| s["attention_share"].as_f64())
        .collect();
    assert_eq!(shares.len(), 3, "every source has an attention share");
    assert!(
        (shares.iter().sum::<f64>() - 1.0).abs() < 1e-3,
        "{shares:?}"
    );
    let streamed: String = first
        .iter()
        .filter(|v| v["type"] == "token")
        .filter_map(|v| v["text"].as_str())
        .collect();
    assert_eq!(
        streamed,
        record(&first, "answer")["text"].as_str().expect("text")
    );

    let again = record(&ask("parallel"), "stats").clone();
    assert_eq!(again["mode"], "parallel");
    assert_eq!(again["states_encoded_on_demand"], 0, "cached by the first");
    let pcw = record(&ask("pcw"), "stats").clone();
    assert_eq!(pcw["mode"], "pcw");
    assert_eq!(
        pcw["states_encoded_on_demand"], 3,
        "PCW states are their own"
    );
    let seq = record(&ask("sequential"), "stats").clone();
    assert_eq!(seq["mode"], "sequential");
    assert_eq!(
        seq["states_encoded_on_demand"], 0,
        "sequential reads no states"
    );
}

#[test]
fn a_corrupted_cache_entry_is_rebuilt_not_used() {
    let cache = tempfile::tempdir().expect("tempdir");
    let ask = || {
        let q = "Where are encryption keys kept?";
        ask_json(cache.path(), q, &["--max-tokens", "8", "--top-k", "2"])
    };
    let clean = ask();
    let files: Vec<_> = files_under(&cache.path().join("kv"));
    assert!(files.len() >= 2);
    // Flip a byte in half of the entries, truncate the other half.
    for (i, f) in files.iter().enumerate() {
        let mut bytes = std::fs::read(f).expect("read");
        if i % 2 == 0 {
            let at = bytes.len() - 7;
            bytes[at] ^= 0x55;
        } else {
            bytes.truncate(bytes.len() / 2);
        }
        std::fs::write(f, bytes).expect("write");
    }
    let rebuilt = ask();
    let stats = record(&rebuilt, "stats");
    assert_eq!(
        stats["cache_rejected"], 2,
        "both retrieved states were corrupt"
    );
    assert_eq!(stats["chunks_encoded"], 2);
    assert_eq!(
        record(&clean, "answer")["text"],
        record(&rebuilt, "answer")["text"]
    );
}

#[test]
fn packaged_completions_and_man_page_match_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let packaging = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging");
    for (args, file) in [
        (&["completions", "bash"][..], "completions/ape-chat.bash"),
        (&["completions", "zsh"][..], "completions/_ape-chat"),
        (&["completions", "fish"][..], "completions/ape-chat.fish"),
        (&["man"][..], "man/ape-chat.1"),
    ] {
        let out = ape_chat(dir.path()).args(args).output().expect("run");
        assert!(out.status.success());
        let committed = std::fs::read(packaging.join(file)).expect("packaged file");
        assert!(
            out.stdout == committed,
            "packaging/{file} is stale: run scripts/package-docs.sh"
        );
    }
}

#[test]
fn ask_on_an_unindexed_folder_indexes_it_first_with_progress_on_stderr() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            "Where are encryption keys kept?",
            "--max-tokens",
            "8",
            "--top-k",
            "2",
            "--model",
        ])
        .arg(tiny_model_path())
        .arg(sample_dir())
        .succeed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("indexing: 0/"), "{err}");
    let total = err
        .lines()
        .rfind(|l| l.starts_with("indexing: "))
        .unwrap_or("");
    let (done, all) = total["indexing: ".len()..]
        .split_once(' ')
        .and_then(|(f, _)| f.split_once('/'))
        .unwrap_or(("", "x"));
    assert_eq!(done, all, "progress reaches the end: {err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Sources"), "{stdout}");
}

#[test]
fn settings_layer_file_then_env_then_flags() {
    let cache = tempfile::tempdir().expect("tempdir");
    let config = format!(
        "top_k = 1\nfolders = [\"{}\"]\nmodel = \"{}\"\n",
        sample_dir().display(),
        tiny_model_path().display()
    );
    std::fs::write(cache.path().join("config.toml"), config).expect("write config");
    let sources = |env: Option<&str>, flag: Option<&str>| {
        let mut c = ape_chat(cache.path());
        c.args([
            "--ask",
            "Where are encryption keys kept?",
            "--json",
            "--max-tokens",
            "2",
        ]);
        if let Some(k) = env {
            c.env("APE_CHAT_TOP_K", k);
        }
        if let Some(k) = flag {
            c.args(["--top-k", k]);
        }
        let out = c.output().expect("run"); // no DIR, no --model: both from the file
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        record(&json_lines(&out.stdout), "sources")["sources"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(sources(None, None), 1, "file");
    assert_eq!(sources(Some("2"), None), 2, "env over file");
    assert_eq!(sources(Some("2"), Some("3")), 3, "flag over env");

    std::fs::write(cache.path().join("config.toml"), "top_k = \"many\"\n").expect("write");
    let out = ape_chat(cache.path())
        .args(["--ask", "q"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("top_k"),
        "{err}"
    );
}

/// A bad value in the config file stops the run with the file and the key
/// named, before any work.
#[test]
fn a_bad_config_value_names_the_file_and_the_key() {
    let cache = tempfile::tempdir().expect("tempdir");
    let config = cache.path().join("config.toml");
    std::fs::write(&config, "top_k = 4\nquality = \"fastest\"\n").expect("write");
    let out = ape_chat(cache.path())
        .args(["--ask", "anything?", "--model"])
        .arg(tiny_model_path())
        .arg(sample_dir())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&config.display().to_string()), "{err}");
    assert!(err.contains("quality") && err.contains("fastest"), "{err}");
    assert!(
        !cache.path().join("indexes").exists(),
        "nothing was indexed"
    );
}

#[test]
fn first_run_writes_a_commented_config() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args(["cache", "stats"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = std::fs::read_to_string(cache.path().join("config.toml")).expect("config written");
    assert!(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.starts_with('#')));
}

/// Uses the default model (Qwen2.5-Coder-1.5B): the 135M test model is too
/// small to answer reliably, and this checks the answer itself.
#[test]
fn default_model_answers_from_the_right_file_in_ape_and_sequential_mode() {
    let model = crate::common::default_model_path();
    let cache = tempfile::tempdir().expect("tempdir");
    for mode in ["ape", "sequential"] {
        for (question, file, facts) in [
            (
                "When was Orbit 4.2 released?",
                "release-notes-4.2.txt",
                &["October", "14"][..],
            ),
            (
                "In which region are the encryption keys stored?",
                "backup-policy.md",
                &["Frankfurt"][..],
            ),
        ] {
            let out = ape_chat(cache.path())
                .args([
                    "--ask",
                    question,
                    "--json",
                    "--mode",
                    mode,
                    "--max-tokens",
                    "40",
                    "--model",
                ])
                .arg(&model)
                .arg(sample_dir())
                .succeed();
            let lines = json_lines(&out.stdout);
            let answer = record(&lines, "answer")["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            for fact in facts {
                assert!(answer.contains(fact), "[{mode}] {question}: {answer:?}");
            }
            assert_eq!(
                record(&lines, "sources")["sources"][0]["path"],
                file,
                "[{mode}] {question}"
            );
            let stats = record(&lines, "stats");
            assert_eq!(stats["mode"], mode);
            for key in [
                "retrieval_ms",
                "state_load_ms",
                "question_prefill_ms",
                "ttft_ms",
                "decode_tokens_per_s",
            ] {
                assert!(stats[key].is_number(), "{key}");
            }
        }
    }
}

#[test]
fn ask_reads_the_question_from_stdin() {
    use std::io::Write;
    let cache = tempfile::tempdir().expect("tempdir");
    let mut child = ape_chat(cache.path())
        .args([
            "--ask",
            "-",
            "--json",
            "--max-tokens",
            "2",
            "--top-k",
            "1",
            "--model",
        ])
        .arg(tiny_model_path())
        .arg(sample_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"Where are encryption keys kept?\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert_eq!(
        record(&json_lines(&out.stdout), "sources")["sources"][0]["path"],
        "backup-policy.md"
    );
    let empty = ape_chat(cache.path())
        .args(["--ask", "-"])
        .arg(sample_dir())
        .output()
        .expect("run");
    assert_eq!(
        empty.status.code(),
        Some(1),
        "an empty question is an error"
    );
}

/// Ctrl-C mid-answer: the partial answer is not saved as a turn of the
/// conversation (a follow-up would read it as what was said); a finished
/// answer is.
#[test]
fn a_stopped_answer_is_not_saved_to_the_conversation() {
    use std::io::{BufRead, BufReader};
    let cache = tempfile::tempdir().expect("tempdir");
    let chat = cache.path().join("chat.json");
    let mut child = ape_chat(cache.path())
        .args(["--ask", "Write a very long story about backups.", "--json"])
        .args(["--max-tokens", "400", "--conversation"])
        .arg(&chat)
        .arg("--model")
        .arg(tiny_model_path())
        .arg(sample_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut tokens = 0;
    while tokens < 3 {
        let line = lines.next().expect("a line").expect("read");
        tokens += usize::from(line.contains(r#""type":"token""#));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(
        rest.iter().any(|l| l.contains(r#""stop":"cancelled""#)),
        "the answer was stopped: {rest:?}"
    );
    assert!(!chat.exists(), "a stopped answer is no turn");
    ask_json(
        cache.path(),
        "How long are nightly snapshots kept?",
        &[
            "--max-tokens",
            "4",
            "--conversation",
            chat.to_str().expect("utf-8"),
        ],
    );
    let turns: Vec<Value> =
        serde_json::from_slice(&std::fs::read(&chat).expect("saved")).expect("json");
    assert_eq!(turns.len(), 1);
}

/// A state file that cannot be read now (here: a directory in its place,
/// as an I/O error would leave it) is encoded for the answer and kept, not
/// deleted as a corrupt one is.
#[test]
fn a_state_that_cannot_be_read_is_kept_not_deleted() {
    let cache = tempfile::tempdir().expect("tempdir");
    let ask = || {
        let q = "Where are encryption keys kept?";
        ask_json(cache.path(), q, &["--max-tokens", "8", "--top-k", "1"])
    };
    let clean = ask();
    let files: Vec<_> = files_under(&cache.path().join("kv"));
    assert_eq!(files.len(), 1, "{files:?}");
    let f = &files[0];
    std::fs::remove_file(f).expect("remove");
    std::fs::create_dir(f).expect("a directory in its place");
    let again = ask();
    let stats = record(&again, "stats");
    assert_eq!(stats["cache_unreadable"], 1, "{stats}");
    assert_eq!(stats["cache_rejected"], 0, "{stats}");
    assert!(f.is_dir(), "kept");
    let notes = stats["notes"].to_string();
    assert!(notes.contains("could not be read"), "{notes}");
    assert_eq!(
        record(&clean, "answer")["text"],
        record(&again, "answer")["text"]
    );
}

/// A built book beside notes and code, as `index --dry-run` and `--ask`
/// see it: the book's own scripts, style sheet, SVG image and print copy
/// are passed over with their reasons and what reading them would cost
/// (read with `--all-files`), the code project's files stay documents, and
/// a passage kept in two places is retrieved once.
#[test]
fn a_sites_assets_are_passed_over_and_a_passage_in_two_places_is_read_once() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let page = |body: &str, tail: &str| {
        format!(
            "<html><head><title>Book</title><link rel=\"stylesheet\" href=\"css/book.css\"></head>\
             <body><main>{body}</main><script src=\"book.js\"></script>{tail}</body></html>"
        )
    };
    let chapter = "<h1>Retention</h1><p>Nightly snapshots are kept for 35 days, then pruned.</p>";
    let files: &[(&str, String)] = &[
        ("book/index.html", page("<h1>The Book</h1><p>Start with the retention chapter.</p>", "")),
        ("book/ch01.html", page(chapter, "")),
        (
            "book/print.html",
            page(chapter, "<script>window.addEventListener('load', function() { window.setTimeout(window.print, 100); });</script>"),
        ),
        ("book/book.js", "function toggle() {\n  document.body.classList.toggle('dark');\n}\n".repeat(20)),
        ("book/css/book.css", ".sidebar {\n  width: 300px;\n  color: #333;\n}\n".repeat(20)),
        ("book/img/ferris.svg", format!("<svg><path d=\"{}\"/></svg>", "M10 10 L20 20 ".repeat(200))),
        ("notes/keys.md", "# Keys\n\nEncryption keys are kept in the hardware vault in room 4.\n".into()),
        ("archive/keys.md", "# Keys\n\nEncryption keys are kept in the hardware vault in room 4.\n".into()),
        ("code/package.json", "{\"name\": \"tool\"}\n".into()),
        ("code/index.html", "<html><body><p>The tool's page.</p></body></html>".into()),
        ("code/src/app.js", "// Rotates the vault keys every 90 days.\nfunction rotate() { return 90; }\n".into()),
    ];
    for (rel, text) in files {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let plan = |extra: &[&str]| -> Value {
        let out = ape_chat(cache.path())
            .args(["index", "--dry-run", "--json", "--model"])
            .arg(tiny_model_path())
            .args(extra)
            .arg(d)
            .succeed();
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let p = plan(&[]);
    let paths = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|f| f["path"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        paths(&p["read"]),
        [
            "archive/keys.md",
            "book/ch01.html",
            "book/index.html",
            "code/index.html",
            "code/package.json",
            "code/src/app.js",
            "notes/keys.md"
        ],
        "{p}"
    );
    let skipped = p["skipped"].as_array().expect("skipped");
    for (path, says) in [
        ("book/book.js", "script of the web site"),
        ("book/css/book.css", "style sheet of the web site"),
        ("book/img/ferris.svg", "an image"),
        ("book/print.html", "print copy"),
    ] {
        let s = skipped
            .iter()
            .find(|s| s["path"] == path)
            .unwrap_or_else(|| panic!("{path} not skipped: {p}"));
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(says), "{path}: {reason}");
        assert!(s["tokens"].as_u64() > Some(0), "{path}: its cost: {s}");
    }
    let sum = |key: &str| {
        skipped
            .iter()
            .map(|s| s[key].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert_eq!(p["passed_over_tokens"].as_u64(), Some(sum("tokens")));
    let read_tokens: u64 = p["read"]
        .as_array()
        .expect("read")
        .iter()
        .map(|f| f["tokens"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(p["tokens"].as_u64(), Some(read_tokens));
    // Everything, when asked for.
    let all = plan(&["--all-files"]);
    assert_eq!(
        all["read"].as_array().map(Vec::len),
        Some(files.len()),
        "{all}"
    );
    assert_eq!(all["tokens"].as_u64(), Some(read_tokens + sum("tokens")));

    // The index reads what the plan said, and an answer reads one copy.
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            "Where are the encryption keys kept?",
            "--json",
            "--max-tokens",
            "2",
            "--top-k",
            "all",
            "--model",
        ])
        .arg(tiny_model_path())
        .arg(d)
        .succeed();
    let lines = json_lines(&out.stdout);
    let sources = record(&lines, "sources")["sources"].clone();
    let paths = paths(&sources);
    let keys = paths.iter().filter(|p| p.ends_with("keys.md")).count();
    assert_eq!(keys, 1, "one copy of the passage: {paths:?}");
    assert_eq!(paths.len(), 6, "every other document, once: {paths:?}");
    assert!(!paths
        .iter()
        .any(|p| p == "book/print.html" || p == "book/book.js"));
}

/// `index --json`: the report on stdout, and on stderr a JSON progress
/// event as each stage opens (before its first unit, however slow that
/// is), then as it goes, ending at its total; counts that only grow.
#[test]
fn index_json_reports_every_stage_as_it_opens_and_ends() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = ape_chat(cache.path())
        .args(["index", "--json", "--model"])
        .arg(tiny_model_path())
        .arg(sample_dir())
        .succeed();
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report");
    let chunks = report["chunks"].as_u64().expect("chunks");
    assert!(chunks > 0, "{report}");
    let events = json_lines(&out.stderr);
    let progress: Vec<&Value> = events.iter().filter(|e| e["event"] == "progress").collect();
    let mut order = Vec::new();
    for stage in ["text", "vectors", "states"] {
        let seen: Vec<&&Value> = progress.iter().filter(|e| e["stage"] == stage).collect();
        let first = seen
            .first()
            .unwrap_or_else(|| panic!("no {stage} events: {events:?}"));
        assert_eq!(
            first["done"], 0,
            "{stage} opens before its first unit: {first}"
        );
        assert!(
            first["rate"].is_null() && first["eta_s"].is_null(),
            "{first}"
        );
        let last = seen.last().expect("last");
        assert_eq!(
            last["done"], last["total"],
            "{stage} ends at its total: {last}"
        );
        if stage != "text" {
            assert_eq!(
                last["total"].as_u64(),
                Some(chunks),
                "a unit per chunk: {last}"
            );
        }
        assert!(last["rate"].as_f64() > Some(0.0), "{last}");
        for w in seen.windows(2) {
            assert!(w[0]["done"].as_u64() <= w[1]["done"].as_u64(), "{w:?}");
            assert!(
                w[0]["elapsed_s"].as_f64() <= w[1]["elapsed_s"].as_f64(),
                "{w:?}"
            );
        }
        order.push(
            progress
                .iter()
                .position(|e| e["stage"] == stage)
                .expect("seen"),
        );
    }
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "stages in order: {order:?}"
    );
    assert_eq!(report["chunks_encoded"].as_u64(), Some(chunks), "{report}");
}

/// `bench index`: both selections of one folder, read whole; vectors on
/// one thread and on every core over the same sample; states encoded and
/// stored; the time to ready from those rates.
#[test]
fn bench_index_times_every_stage_for_documents_and_every_file() {
    let cache = tempfile::tempdir().expect("tempdir");
    let d = tempfile::tempdir().expect("tempdir");
    let book = d.path().join("book");
    std::fs::create_dir_all(&book).expect("mkdir");
    let page = |n: usize| {
        format!(
            "<html><body><nav>Menu</nav><main><h1>Chapter {n}</h1><p>{}</p></main></body></html>",
            "Herons nest in colonies high in old trees, and feed at dawn in shallow water. "
                .repeat(3 + n)
        )
    };
    for n in 0..4 {
        std::fs::write(book.join(format!("ch{n}.html")), page(n)).expect("write");
    }
    std::fs::write(
        book.join("book.js"),
        "function go(a) {\n  return a + 1;\n}\n".repeat(40),
    )
    .expect("write");
    let out = ape_chat(cache.path())
        .args([
            "bench",
            "index",
            "--json",
            "--vector-sample",
            "8",
            "--state-sample",
            "2",
        ])
        .arg("--model")
        .arg(tiny_model_path())
        .arg(d.path())
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let (docs, all) = (&r["documents"], &r["all_files"]);
    assert_eq!(docs["files"], 4, "{r}");
    assert_eq!(all["files"], 5, "{r}");
    assert!(docs["chunks"].as_u64() >= Some(4), "{r}");
    assert!(all["tokens"].as_u64() > docs["tokens"].as_u64(), "{r}");
    for s in [docs, all] {
        assert!(s["ready_s"].as_f64() > s["read_s"].as_f64(), "{s}");
    }
    let threads: Vec<u64> = r["vectors"]
        .as_array()
        .expect("vectors")
        .iter()
        .map(|v| {
            assert!(v["chunks_per_s"].as_f64() > Some(0.0), "{v}");
            v["threads"].as_u64().unwrap_or(0)
        })
        .collect();
    assert_eq!(threads[0], 1, "{r}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    if cores > 1 {
        assert_eq!(threads, [1, cores], "{r}");
    }
    let states = &r["states"];
    assert_eq!(states["chunks"], 2, "{r}");
    assert!(states["bytes"].as_u64() > Some(0), "{r}");
}

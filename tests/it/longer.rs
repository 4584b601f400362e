//! Longer: hundreds of cached chunks on shared positions, past the model's
//! window; memory, not the window, limits what an answer reads; sequential
//! prefill reads what fits, its middle cut out.

use std::path::Path;

use serde_json::Value;

use crate::common::{ape_chat, engine, files_under, json_lines, layout, record, tiny_model_path};
use ape_chat::engine::check;
use ape_chat::engine::{ApeParams, EditPath};

/// The tiny model's trained window.
const WINDOW: u64 = 8192;

/// Plain prose that varies from paragraph to paragraph (a linear
/// congruential pick of words), so that no two chunks are alike.
fn prose(seed: usize, sentences: usize) -> String {
    const WHO: [&str; 8] = [
        "The ferry crew",
        "A night clerk",
        "The orchard owner",
        "Two surveyors",
        "The harbour master",
        "An old weaver",
        "The station cook",
        "A pair of cartographers",
    ];
    const DID: [&str; 8] = [
        "repaired the eastern pier",
        "counted the winter stores",
        "mapped the salt marsh",
        "rewound the town clock",
        "painted the signal house",
        "sorted the parish letters",
        "measured the river's depth",
        "planted rows of quince",
    ];
    const WHEN: [&str; 8] = [
        "before the spring fair",
        "during the long frost",
        "after the harvest moon",
        "on a grey Tuesday",
        "while the tide was out",
        "in the first week of June",
        "as the bells rang noon",
        "under a sky of low cloud",
    ];
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let mut next = |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize % n
    };
    (0..sentences)
        .map(|_| format!("{} {} {}.", WHO[next(8)], DID[next(8)], WHEN[next(8)]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A folder of `files` notes of about 1,300 tiny-model tokens each, the
/// needle in the middle of one of them.
fn haystack(dir: &Path, files: usize, needle_in: usize) {
    for i in 0..files {
        let mut text = format!("# Log {i}\n\n{}\n\n", prose(i, 40));
        if i == needle_in {
            text.push_str("The passphrase of the Orvald observatory is marigold.\n\n");
        }
        text.push_str(&prose(i + 1000, 40));
        std::fs::write(dir.join(format!("log-{i:03}.md")), text).expect("write");
    }
}

#[test]
fn ape_at_identity_over_many_chunks_is_parallel_attention_token_for_token() {
    let texts: Vec<String> = (0..40).map(|i| prose(i, 22)).collect();
    let r = check::wide_identity(
        engine(),
        &layout(),
        &texts,
        "Who rewound the town clock?",
        4,
    )
    .expect("runs");
    assert!(r.cells as u64 > WINDOW, "past the window: {r:?}");
    assert!((r.max_position as u64) < WINDOW, "{r:?}");
    assert_eq!(r.softmax_vs_parallel, 0.0, "{r:?}");
    assert_eq!(r.callback_vs_parallel, 0.0, "{r:?}");
    assert!(r.shares_ok, "{r:?}");
    // The callback's row blocks edit exactly what one whole copy does.
    assert_eq!(r.blocks_vs_whole, 0.0, "{r:?}");
}

#[test]
fn ape_math_holds_over_many_chunks_past_the_window() {
    let texts: Vec<String> = (0..36).map(|i| prose(i + 50, 22)).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Both places the edit can run: llama.cpp's patched softmax, and the
    // eval callback (focus and attribution use it).
    for path in [EditPath::Softmax, EditPath::Callback] {
        let r = check::ape_math(
            engine(),
            &layout(),
            &refs,
            "Who planted rows of quince?",
            ApeParams::new(0.8, 0.9),
            1,
            path,
        )
        .expect("runs");
        assert_eq!(r.chunks, 36);
        assert_eq!(r.layout_errors, 0, "{path:?}: {r:?}");
        assert!(r.max_abs_error <= 1e-5, "{path:?}: {r:?}");
    }
}

#[test]
fn top_k_all_reads_a_folder_past_the_window_and_sequential_reads_its_ends() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    haystack(dir.path(), 28, 17);
    let ask = |extra: &[&str]| {
        let out = ape_chat(cache.path())
            .args(["--ask", "What is the passphrase of the Orvald observatory?"])
            .args(["--json", "--top-k", "all", "--max-tokens", "16"])
            .args(extra)
            .arg("--model")
            .arg(tiny_model_path())
            .arg(dir.path())
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out.stdout)
    };
    // The default quality: APE over every chunk, the best one re-read.
    let fast = ask(&[]);
    let stats = record(&fast, "stats");
    let n = |k: &str| stats[k].as_u64().unwrap_or_else(|| panic!("{k}: {stats}"));
    assert_eq!(n("window"), WINDOW);
    assert!(n("context_tokens") > 4 * WINDOW, "{stats}");
    assert!(n("max_position") < WINDOW, "{stats}");
    let sources = record(&fast, "sources")["sources"]
        .as_array()
        .expect("sources")
        .len();
    assert_eq!(sources as u64, n("chunks_read"));
    assert!(sources > 100, "every chunk of the folder: {sources}");
    // The needle is found among them.
    let answer = record(&fast, "answer")["text"].as_str().unwrap_or("");
    assert!(
        answer.to_lowercase().contains("marigold"),
        "the needle among {sources} chunks: {answer:?}"
    );

    // Sequential reads what fits its window: the middle goes, and it says so.
    let exact = ask(&["--quality", "exact"]);
    let stats = record(&exact, "stats");
    assert!(stats["max_position"].as_u64().expect("max_position") < WINDOW);
    let notes = stats["notes"].to_string();
    assert!(notes.contains("the middle"), "{notes}");
    assert!(
        stats["context_tokens"].as_u64().expect("tokens") <= WINDOW,
        "{stats}"
    );
}

#[test]
fn a_memory_budget_too_small_is_a_clear_error_before_any_state_work() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    haystack(dir.path(), 6, 2);
    let out = ape_chat(cache.path())
        .args(["--ask", "What is the passphrase?", "--top-k", "all"])
        .args(["--memory-budget-gb", "0.01", "--model"])
        .arg(tiny_model_path())
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("this answer needs")
            && err.contains("over 10 MB (the configured memory budget)"),
        "{err}"
    );
    assert!(
        files_under(&cache.path().join("kv")).is_empty(),
        "nothing encoded before the error"
    );
}

#[test]
fn a_whole_file_is_read_in_document_order_besides_the_top_k() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    haystack(dir.path(), 6, 2);
    let run = |extra: &[&str]| {
        ape_chat(cache.path())
            .args([
                "--ask",
                "Who mapped the salt marsh?",
                "--json",
                "--max-tokens",
                "4",
            ])
            .args(["--top-k", "2"])
            .args(extra)
            .arg("--model")
            .arg(tiny_model_path())
            .arg(dir.path())
            .output()
            .expect("run")
    };
    let out = run(&["--quality", "exact", "--file", "./log-004.md"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    let sources = record(&lines, "sources")["sources"]
        .as_array()
        .expect("sources")
        .clone();
    let of_file: Vec<u64> = sources
        .iter()
        .filter(|s| s["path"] == "log-004.md")
        .map(|s| s["lines"][0].as_u64().expect("line"))
        .collect();
    assert!(of_file.len() >= 3, "every chunk of the file: {sources:?}");
    let others = sources.len() - of_file.len();
    assert!(others <= 2, "and the top 2 of the rest: {sources:?}");
    // A file that is not there is named, with the nearest indexed one.
    let out = run(&["--file", "log-4.md"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("log-4.md is not an indexed file"), "{err}");
    // `balanced` echoes the best chunk on the CPU, but over a named file
    // re-reads it whole by prefill (counts and lists need its every line,
    // measured so).
    let window = |extra: &[&str]| {
        let out = run(extra);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stats = record(&json_lines(&out.stdout), "stats").clone();
        (
            stats["reread"].as_u64(),
            stats["reread_window"].as_u64(),
            stats["reread_echo"].as_bool(),
        )
    };
    assert_eq!(window(&[]), (Some(1), Some(0), Some(true)));
    let named = ["--file", "log-004.md"];
    assert_eq!(window(&named), (Some(1), Some(0), Some(false)));
    // What the user set wins.
    let set = ["--file", "log-004.md", "--reread-window", "32"];
    assert_eq!(window(&set), (Some(1), Some(32), Some(false)));
}

#[test]
fn bench_context_times_past_the_window_and_sequential_only_where_it_fits() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    let run = ape_chat(cache.path())
        .args([
            "bench",
            "context",
            "--tokens",
            "512,1024",
            "--chunk-tokens",
            "128",
        ])
        .args(["--sequential-max", "512", "--decode-tokens", "2", "--out"])
        .arg(out.path())
        .arg("--model")
        .arg(tiny_model_path())
        .output()
        .expect("run");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("bench-context.json")).expect("json written"),
    )
    .expect("json");
    assert_eq!(json["window"], WINDOW);
    let points = json["points"].as_array().expect("points");
    let labels = |i: usize| -> Vec<String> {
        points[i]["modes"]
            .as_array()
            .expect("modes")
            .iter()
            .map(|m| m["mode"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(points.len(), 2);
    assert_eq!(
        (points[0]["tokens"].as_u64(), points[1]["chunks"].as_u64()),
        (Some(512), Some(8))
    );
    assert!(
        labels(0).iter().any(|m| m.starts_with("sequential")),
        "{:?}",
        labels(0)
    );
    assert!(
        !labels(1).iter().any(|m| m.starts_with("sequential")),
        "past --sequential-max"
    );
    assert!(
        labels(1).iter().any(|m| m.contains("re-read 1")),
        "{:?}",
        labels(1)
    );
    for p in points {
        for m in p["modes"].as_array().expect("modes") {
            assert!(m["ttft_ms"].as_f64().unwrap_or(0.0) > 0.0, "{m}");
            assert!(
                m["decode_tokens_per_s"].as_f64().unwrap_or(0.0) > 0.0,
                "{m}"
            );
        }
    }
    let svg = std::fs::read_to_string(out.path().join("bench-context.svg")).expect("svg written");
    assert!(
        svg.contains("cached tokens read") && svg.contains("sequential"),
        "the chart names its axes and modes"
    );
    // States held in memory: the fastest tier (RAM on a CPU build) is timed
    // and drawn as its own line.
    let tier = points[0]["modes"][0]["memory"][0]["tier"]
        .as_str()
        .expect("the cached mode is timed from a memory tier")
        .to_string();
    assert!(
        svg.contains(&format!("states in {tier}")),
        "tier line drawn"
    );

    // `--from` measures nothing: it redraws the chart from the saved report
    // and prints that report.
    std::fs::remove_file(out.path().join("bench-context.svg")).expect("rm svg");
    let saved = out.path().join("bench-context.json");
    let again = ape_chat(cache.path())
        .args(["bench", "context", "--json", "--from"])
        .arg(&saved)
        .output()
        .expect("run");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let reread: Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(reread["points"].as_array().map(Vec::len), Some(2));
    assert_eq!(reread["points"][1]["modes"], json["points"][1]["modes"]);
    let redrawn =
        std::fs::read_to_string(out.path().join("bench-context.svg")).expect("svg redrawn");
    assert!(redrawn.contains(&format!("states in {tier}")));

    // Anything else is refused with the file's name, and nothing is drawn.
    let bad = out.path().join("not-a-report.json");
    std::fs::write(&bad, "{\"modes\": []}").expect("write");
    let refused = ape_chat(cache.path())
        .args(["bench", "context", "--from"])
        .arg(&bad)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        err.contains("not-a-report.json") && err.contains("not a bench context report"),
        "{err}"
    );
    assert!(!out.path().join("not-a-report.svg").exists());
}

/// A `bench context` cut short (a lent GPU's time limit, a kill) keeps the
/// sizes it finished: the JSON holds every finished size the moment the next
/// one starts.
#[test]
fn bench_context_cut_short_keeps_the_sizes_it_finished() {
    use std::io::{BufRead, BufReader};
    let cache = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    let mut child = ape_chat(cache.path())
        .args(["bench", "context", "--tokens", "256,512,1024"])
        .args(["--chunk-tokens", "128", "--sequential-max", "0"])
        .args(["--decode-tokens", "1", "--out"])
        .arg(out.path())
        .arg("--model")
        .arg(tiny_model_path())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut seen = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("line");
        seen.push(line.clone());
        if line.contains("512 tokens: repeat") {
            break;
        }
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    let json: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("bench-context.json"))
            .unwrap_or_else(|e| panic!("partial json: {e}; stderr: {seen:?}")),
    )
    .expect("json");
    let points = json["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "{json}");
    assert_eq!(points[0]["tokens"].as_u64(), Some(256));
}

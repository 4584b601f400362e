//! `ape-chat eval` end to end on the tiny model: the pipeline, not the scores.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{ape_chat, tiny_model_path, Succeed};

fn sample_records() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
    let paragraphs: Vec<String> = [
        "backup-policy.md",
        "onboarding.md",
        "release-notes-4.2.txt",
        "field-notes-kestrels.md",
    ]
    .iter()
    .flat_map(|f| {
        let text = std::fs::read_to_string(dir.join(f)).expect("sample");
        text.split("\n\n")
            .filter(|p| p.len() > 80)
            .map(str::to_string)
            .collect::<Vec<_>>()
    })
    .collect();
    let qa = [
        ("How long are nightly snapshots kept?", "35 days"),
        (
            "Who approves exceptions to the backup policy?",
            "Priya Raman",
        ),
        ("When was Orbit 4.2 released?", "14 October 2026"),
        ("How many young did Box 3 fledge?", "five"),
        (
            "Where do you collect your laptop?",
            "the IT desk on the third floor",
        ),
    ];
    qa.iter()
        .enumerate()
        .map(|(i, (q, a))| {
            let contexts: Vec<&String> = paragraphs.iter().skip(i * 2).take(3).collect();
            json!({"id": format!("r{i}"), "question": q, "contexts": contexts, "answers": [a]})
                .to_string()
                + "\n"
        })
        .collect()
}

#[test]
fn eval_scores_every_mode_and_resumes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data.jsonl");
    std::fs::write(&data, sample_records()).expect("write");
    let results = dir.path().join("results.jsonl");
    let run = |extra: &[&str]| {
        let out = ape_chat(dir.path())
            .args(["eval", "--json", "--max-tokens", "8"])
            .args(extra)
            .arg("--dataset")
            .arg(&data)
            .arg("--results")
            .arg(&results)
            .arg("--model")
            .arg(tiny_model_path())
            .succeed();
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let three = ["--modes", "sequential,parallel,ape"];
    let r = run(&three);
    let summary = r["summary"].as_array().expect("summary");
    let modes: Vec<&str> = summary.iter().filter_map(|s| s["mode"].as_str()).collect();
    assert_eq!(modes, ["sequential", "parallel", "ape"]);
    for s in summary {
        assert_eq!(s["records"], 5);
        for key in ["em", "f1", "contains"] {
            assert!(
                s[key].as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)),
                "{key}: {s}"
            );
        }
        assert!(s["ttft_ms_mean"].as_f64().is_some_and(|x| x > 0.0));
        assert!(s["answer_nll"].as_f64().is_some_and(|x| x > 0.0), "{s}");
        assert!(s["answer_logprob"].as_f64().is_some_and(|x| x < 0.0), "{s}");
    }
    for p in r["predictions"].as_array().expect("predictions") {
        let (lp, nll, n) = (&p["answer_logprob"], &p["answer_nll"], &p["gold_tokens"]);
        let (lp, nll, n) = (
            lp.as_f64().expect("lp"),
            nll.as_f64().expect("nll"),
            n.as_f64().expect("n"),
        );
        assert!(n > 0.0 && (nll + lp / n).abs() < 1e-9, "{p}");
    }
    let pairs: Vec<String> = r["paired"]
        .as_array()
        .expect("paired")
        .iter()
        .map(|p| {
            format!(
                "{}-{}",
                p["a"].as_str().unwrap_or(""),
                p["b"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        pairs,
        ["parallel-sequential", "ape-sequential", "ape-parallel"]
    );
    for p in r["paired"].as_array().expect("paired") {
        assert_eq!(p["records"], 5);
        let d = &p["answer_nll"];
        assert!(
            d["lo"].as_f64() <= d["value"].as_f64() && d["value"].as_f64() <= d["hi"].as_f64(),
            "{p}"
        );
        assert!(p["nll_verdict"].is_string() && p["f1_verdict"].is_string());
    }
    let retention = r["retention"].as_array().expect("retention");
    assert_eq!(retention.len(), 2);
    assert_eq!(retention[1]["mode"], "ape");
    assert_eq!(retention[1]["baseline"], "sequential");
    assert!(retention[1]["likelihood"]["value"]
        .as_f64()
        .is_some_and(|x| x > 0.0));
    assert_eq!(r["predictions"].as_array().map(Vec::len), Some(15));
    let lines = || {
        std::fs::read_to_string(&results)
            .expect("results")
            .lines()
            .count()
    };
    assert_eq!(lines(), 15);
    let again = run(&three);
    assert_eq!(
        lines(),
        15,
        "a second run resumes: nothing is answered twice"
    );
    assert_eq!(again["summary"], r["summary"]);
    // Other APE values: only the APE rows are new; the rest is reused.
    let other = run(&[
        &three[..],
        &["--temperature-ape", "0.5", "--scale-ape", "0.7"],
    ]
    .concat());
    assert_eq!(lines(), 20);
    assert_eq!(other["summary"][0], r["summary"][0]);
    assert_eq!(other["summary"][2]["ape"]["temperature"], 0.5);
    assert_ne!(
        other["summary"][2]["answer_nll"],
        r["summary"][2]["answer_nll"]
    );

    // Other settings (here the answer style) share the file but not rows.
    let styled = run(&[&three[..], &["--style", "Answer in a few words."]].concat());
    assert_eq!(lines(), 35, "every row made again under the new stamp");
    assert_eq!(styled["settings"]["style"], "Answer in a few words.");
    assert_ne!(
        styled["summary"][0]["answer_nll"],
        r["summary"][0]["answer_nll"]
    );
    let again = run(&three);
    assert_eq!(
        again["summary"], r["summary"],
        "the old rows are still its own"
    );
    for p in again["predictions"].as_array().expect("predictions") {
        assert_eq!(p["settings"]["method"], 2, "{p}");
        assert_eq!(p["record"].as_str().map(str::len), Some(16), "{p}");
        assert!(p["code"].as_str().is_some_and(|c| c.contains('+')), "{p}");
    }

    // The reading-order control: the same chunks and question as
    // `sequential`, in the record's order; the first record's best BM25
    // match is not its last context, so the prompts differ.
    let control = run(&["--modes", "sequential,sequential-stored"]);
    assert_eq!(lines(), 40, "only the control's rows are new");
    assert_eq!(control["summary"][0], r["summary"][0]);
    assert_eq!(control["summary"][1]["mode"], "sequential-stored");
    let row = |v: &Value, mode: &str| {
        v["predictions"]
            .as_array()
            .expect("predictions")
            .iter()
            .find(|p| p["id"] == "r0" && p["mode"] == mode)
            .cloned()
            .expect("row")
    };
    assert_ne!(
        row(&control, "sequential")["answer_logprob"],
        row(&control, "sequential-stored")["answer_logprob"]
    );

    // An edited record is answered again, alone; its old rows stay unused.
    let edited: String = sample_records().replacen(
        "How long are nightly snapshots kept?",
        "How long are nightly snapshots kept, in days?",
        1,
    );
    std::fs::write(&data, edited).expect("write");
    let after = run(&three);
    assert_eq!(lines(), 43, "three new rows: record r0 in three modes");
    assert_eq!(after["summary"][0]["records"], 5);
    assert_ne!(
        row(&after, "sequential")["record"],
        row(&r, "sequential")["record"]
    );
    std::fs::write(&data, sample_records()).expect("write");

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"id\": \"x\", \"question\": \"q\", \"contexts\": [], \"answers\": []}\n",
    )
    .expect("write");
    let out = ape_chat(dir.path())
        .args(["eval", "--dataset"])
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.jsonl:1"));
}

/// `calibrate` end to end on the tiny model with the label-free objective,
/// then `--ask` for that model uses what it saved, without being told.
#[test]
fn calibration_is_saved_per_model_and_used_by_ask() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data.jsonl");
    // Unlabelled records: the attention objective needs no answers.
    let unlabelled: String = sample_records()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("record");
            v["answers"] = json!([]);
            v.to_string() + "\n"
        })
        .collect();
    std::fs::write(&data, unlabelled).expect("write");
    let out = ape_chat(dir.path())
        .args(["calibrate", "--json", "--objective", "attention"])
        // No accept part: the found setting is kept, so what --ask uses
        // below is the calibration's own result.
        .args(["--search", "2", "--accept", "0", "--report", "1"])
        .args(["--prefix-newlines", "0,2"])
        .arg("--dataset")
        .arg(&data)
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let c = &r["calibration"];
    let trials = c["trials"].as_array().expect("trials");
    assert!(trials.len() >= 5, "{r}");
    assert_eq!(
        trials[0]["params"]["temperature"], 0.9,
        "starts at the defaults"
    );
    let losses: Vec<f64> = trials.iter().filter_map(|t| t["loss"].as_f64()).collect();
    assert!(
        losses.iter().all(|l| *l >= 0.0),
        "KL is non-negative: {losses:?}"
    );
    assert!(
        losses.windows(2).any(|w| w[0] != w[1]),
        "T and S move the attention: {losses:?}"
    );
    assert_eq!(c["variants"].as_array().map(Vec::len), Some(2));
    assert_eq!(c["records"], json!([2, 0, 1]));
    assert!(c["report"][0]["attention_kl"].as_f64().is_some());
    assert!(c["report"][1]["attention_kl"].as_f64().is_some());
    // The parts never share a record.
    let ids = c["provenance"]["record_ids"].as_array().expect("ids");
    assert_eq!(ids.len(), 3);
    let chosen = &c["chosen"];
    let (t, s) = (
        chosen["params"]["temperature"].as_f64().expect("T"),
        chosen["params"]["scale"].as_f64().expect("S"),
    );
    assert_ne!(
        (t, s),
        (0.9, 0.9),
        "the search moved away from the defaults (else this test proves nothing)"
    );
    let config = std::fs::read_to_string(dir.path().join("config.toml")).expect("config");
    let id = r["model_id"].as_str().expect("model id");
    assert!(config.contains(&format!("[models.{id}]")), "{config}");

    // --ask for this model uses what calibration saved...
    let stats = |extra: &[&str]| -> Value {
        let out = ape_chat(dir.path())
            .args([
                "--ask",
                "When was Orbit 4.2 released?",
                "--json",
                "--max-tokens",
                "4",
            ])
            .args(extra)
            .arg("--model")
            .arg(tiny_model_path())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample"))
            .succeed();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "stats")
            .expect("stats")
    };
    let st = stats(&[]);
    assert_eq!(
        (st["temperature_ape"].as_f64(), st["scale_ape"].as_f64()),
        (Some(t), Some(s))
    );
    // ...and a flag still beats it.
    let st = stats(&["--temperature-ape", "0.8"]);
    assert_eq!(st["temperature_ape"].as_f64(), Some(0.8));
    assert_eq!(st["scale_ape"].as_f64(), Some(s));

    // Evaluating on records the calibration used says so.
    let out = ape_chat(dir.path())
        .args([
            "eval",
            "--modes",
            "parallel",
            "--max-tokens",
            "2",
            "--dataset",
        ])
        .arg(&data)
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("used by the calibration of this model"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The calibration objective measured against what it must be: with one
/// chunk of f16 state the parallel layout at T = S = 1 *is* sequential
/// prefill, so the attention KL is zero; APE's edit moves it away from zero, and with
/// several chunks the unedited parallel layout is not sequential.
#[test]
fn attention_kl_is_zero_exactly_where_the_layouts_agree() {
    use ape_chat::engine::{ApeParams, StateFormat};
    use ape_chat::eval::calibrate::measure::{attention_kl, reference};
    use ape_chat::eval::datasets::Record;
    use ape_chat::eval::run::prepare;
    use ape_chat::kvstore::KvStore;
    use ape_chat::states::States;

    let e = crate::common::engine();
    let line = sample_records().lines().next().map(str::to_string);
    let full: Record = serde_json::from_str(&line.expect("record")).expect("json");
    let mut one = full.clone();
    one.contexts.truncate(1);
    // KL at T = S = 1 and with an edit, for the full record and one chunk.
    let measure = |format: StateFormat| {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = KvStore::new(dir.path()).with_format(format);
        let states = States::new(e, crate::common::layout(), store).expect("states");
        let mut s = e.session().expect("session");
        let mut kl = |record: &Record, params: ApeParams| {
            let p = prepare(&states, &mut s, record, "", false).expect("prepare");
            let r = reference(&states, &mut s, &p).expect("reference");
            attention_kl(&states, &mut s, &p, &r, params).expect("kl")
        };
        let edit = ApeParams::new(0.5, 0.8);
        [
            kl(&full, ApeParams::IDENTITY),
            kl(&full, edit),
            kl(&one, ApeParams::IDENTITY),
            kl(&one, edit),
        ]
    };
    let [several, several_edited, one, one_edited] = measure(StateFormat::F16);
    assert!(one.abs() < 1e-9, "one f16 chunk, no edit: {one}");
    assert!(
        one_edited > 1e-4,
        "the edit moves the attention: {one_edited}"
    );
    assert!(several > 1e-4, "parallel is not sequential: {several}");
    assert_ne!(several, several_edited);
    // Compact states (what ape-chat stores) move the attention a little:
    // their quantization error, far below what the edit does.
    let compact = measure(StateFormat::Compact)[2];
    assert!(
        compact > 0.0 && compact < 0.01 * one_edited,
        "{compact} vs {one_edited}"
    );
}

/// rustup's documentation, where the real-documents questions come from
/// (`scripts/test.sh` adds the `rust-docs` component where it is missing).
fn rust_docs() -> std::path::PathBuf {
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc");
    let root = Path::new(String::from_utf8_lossy(&out.stdout).trim()).join("share/doc/rust/html");
    assert!(
        root.join("style-guide/index.html").is_file(),
        "no rust documentation under {} (rustup component add rust-docs)",
        root.display()
    );
    root
}

/// Debian's python3-doc, where the set's Python folders come from
/// (`scripts/setup.sh` installs it).
fn python_docs() -> std::path::PathBuf {
    let root = Path::new(ape_chat::eval::docs::PYTHON_DOCS).to_path_buf();
    assert!(
        root.join("tutorial/index.html").is_file(),
        "no Python documentation under {} (apt-get install python3-doc)",
        root.display()
    );
    root
}

/// The committed set checks out against the pages it was written from, by
/// a checker that is not ape-chat's (Python's own HTML parser), over both
/// documentation trees, and holds nothing from the held-out book.
#[test]
fn the_real_documents_questions_match_their_pages() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(manifest.join("scripts/docs-questions.py"))
        .arg(manifest.join("assets/eval/docs/questions.jsonl"))
        .arg("--root")
        .arg(rust_docs())
        .arg("--python-root")
        .arg(python_docs())
        .output()
        .expect("python3");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total: usize = said
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert!(total >= 400, "{said}");
    assert!(said.contains("python3/tutorial"), "{said}");
    assert!(said.ends_with("0 failures\n"), "{said}");
}

/// `eval-docs` on a 10-question slice (the style guide's questions, one of
/// rustdoc's and one of Python's *Setup and Usage*, from the other tree),
/// tiny model: every question answered in every setting
/// through `--ask`'s path, each row scored by its own pattern (checked
/// here with the regex crate, apart from the code under test), the
/// summary paired against the first setting (the reference answer's
/// likelihood too, and every miss split into retrieval's and the
/// reader's), recomputing every token answering exactly as sequential
/// prefill, and a rerun answering nothing again. Format and scoring only:
/// the tiny model's answers mean nothing.
#[test]
fn eval_docs_answers_a_slice_and_resumes() {
    const SETTINGS: &str =
        "exact,fast,balanced,ape:t=1:s=1:reread=1,ape:recompute=100,ape:recompute=20";
    let cache = tempfile::tempdir().expect("tempdir");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = std::fs::read_to_string(manifest.join("assets/eval/docs/questions.jsonl"))
        .expect("questions");
    let questions: Vec<Value> = all
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let slice: Vec<&Value> = questions
        .iter()
        .filter(|q| q["folder"] == "style-guide")
        .chain(
            questions
                .iter()
                .filter(|q| q["folder"] == "rustdoc")
                .take(1),
        )
        .chain(
            questions
                .iter()
                .filter(|q| q["docs"] == "python3" && q["folder"] == "using")
                .take(1),
        )
        .collect();
    assert_eq!(slice.len(), 10);
    let file = cache.path().join("slice.jsonl");
    let text: Vec<String> = slice.iter().map(|q| q.to_string()).collect();
    std::fs::write(&file, text.join("\n") + "\n").expect("write");
    let results = cache.path().join("rows.jsonl");
    let run = || {
        let out = ape_chat(cache.path())
            .args(["eval-docs", "--json", "--half", "all", "--max-tokens", "8"])
            .args(["--settings", SETTINGS])
            .arg("--questions")
            .arg(&file)
            .arg("--root")
            .arg(rust_docs())
            .arg("--python-root")
            .arg(python_docs())
            .arg("--results")
            .arg(&results)
            .arg("--model")
            .arg(tiny_model_path())
            .succeed();
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let first = run();
    let rows = first["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 60);
    for row in rows {
        let q = slice
            .iter()
            .find(|q| q["id"] == row["id"])
            .expect("a row for a question of the slice");
        let pattern = regex::RegexBuilder::new(q["answer"].as_str().expect("answer"))
            .case_insensitive(true)
            .build()
            .expect("pattern");
        let answer = row["answer"].as_str().expect("answer");
        assert_eq!(row["right"], json!(pattern.is_match(answer)), "{row}");
        // A Python page is named by its tree, apart from rustup's.
        let tree = if q["docs"] == "python3" {
            "python3/"
        } else {
            ""
        };
        let page = format!(
            "{tree}{}/{}",
            q["folder"].as_str().expect("folder"),
            q["file"].as_str().expect("file")
        );
        assert_eq!(row["page"], json!(page), "{row}");
        assert_eq!(
            row["page_retrieved"],
            json!(!row["page_rank"].is_null()),
            "{row}"
        );
        assert_eq!(row["states_encoded"], 0, "timed with states cached: {row}");
        let nll = row["gold_nll"]
            .as_f64()
            .expect("the reference answer scored");
        assert!(nll.is_finite() && nll > 0.0, "{row}");
    }
    // Recomputing every token is sequential prefill: the same answers and
    // the same likelihood of the reference, to the bit.
    let of = |label: &str| -> Vec<&Value> { rows.iter().filter(|r| r["label"] == label).collect() };
    for (full, exact) in of("ape:recompute=100").iter().zip(of("exact")) {
        assert_eq!(full["id"], exact["id"]);
        assert_eq!(full["answer"], exact["answer"], "{full}");
        assert_eq!(full["gold_nll"], exact["gold_nll"], "{full}");
    }
    let summary = first["summary"].as_array().expect("summary");
    let labels: Vec<&str> = summary.iter().filter_map(|s| s["label"].as_str()).collect();
    assert_eq!(labels, SETTINGS.split(',').collect::<Vec<_>>());
    for s in summary {
        let label = s["label"].as_str().expect("label");
        let right = rows
            .iter()
            .filter(|r| r["label"] == label && r["right"] == true)
            .count();
        assert_eq!(s["questions"], 10);
        assert_eq!(s["right"], right);
        // Every miss is retrieval's or the reader's.
        let missed =
            s["missed_retrieval"].as_u64().expect("n") + s["missed_reading"].as_u64().expect("n");
        assert_eq!(missed as usize, 10 - right, "{s}");
    }
    assert_eq!(summary[0]["against_baseline"]["value"], 0.0);
    assert_eq!(summary[0]["likelihood"]["value"], 1.0);
    assert_eq!(
        summary[4]["likelihood"]["value"], 1.0,
        "recompute=100 is exact"
    );
    assert_eq!(summary[0]["mode"], "sequential");
    let lines = std::fs::read_to_string(&results)
        .expect("rows")
        .lines()
        .count();
    assert_eq!(lines, 60);
    // Everything is in the rows file: a rerun answers nothing again.
    let again = run();
    assert_eq!(again["rows"], first["rows"]);
    let after = std::fs::read_to_string(&results)
        .expect("rows")
        .lines()
        .count();
    assert_eq!(after, 60);
    // Retrieval alone finds the page exactly when the answers read it.
    let out = ape_chat(cache.path())
        .args(["eval-docs", "--json", "--half", "all", "--retrieval-only"])
        .arg("--questions")
        .arg(&file)
        .arg("--root")
        .arg(rust_docs())
        .arg("--python-root")
        .arg(python_docs())
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    let found: Value = serde_json::from_slice(&out.stdout).expect("json");
    let found_rows = found["rows"].as_array().expect("rows");
    assert_eq!(found_rows.len(), 10);
    for f in found_rows {
        let answered = rows
            .iter()
            .find(|r| r["id"] == f["id"] && r["label"] == "fast")
            .expect("an answer row");
        assert_eq!(
            !f["page_rank"].is_null(),
            answered["page_retrieved"] == true,
            "{f} vs {answered}"
        );
    }
    let hits = found_rows
        .iter()
        .filter(|f| !f["page_rank"].is_null())
        .count();
    assert_eq!(found["page_retrieved"]["all"], json!([hits, 10]));
}

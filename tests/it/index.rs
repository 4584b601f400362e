//! `ape-chat index`: what gets indexed, what is skipped and why, and exact
//! incremental behaviour after edits, deletes and renames.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{ape_chat, docx, files_under, pdf, spawn_index, tiny_model_path, Succeed};

fn index(cache: &Path, dir: &Path) -> Value {
    let out = ape_chat(cache)
        .args(["index", "--json", "--chunk-tokens", "64"])
        .arg(dir)
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    serde_json::from_slice(&out.stdout).expect("json report")
}

fn manifest(cache: &Path) -> Value {
    let dirs: Vec<_> = fs::read_dir(cache.join("indexes"))
        .expect("indexes")
        .flatten()
        .collect();
    assert_eq!(dirs.len(), 1);
    serde_json::from_slice(&fs::read(dirs[0].path().join("manifest.json")).expect("manifest"))
        .expect("json")
}

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

const NOTES: &str = "# Field guide\n\nThe heron stands in shallow water at dawn.\n\n## Nesting\n\n\
Herons nest in colonies called heronries, high in old trees.\n\
A heronry on the east bank held forty nests in spring.\n\n## Feeding\n\n\
They eat fish, frogs and small mammals, striking with the bill.\n";

/// A folder with every kind of file the walker must handle; returns the
/// secret text that lives outside it.
fn fixture(root: &Path, outside: &Path) -> &'static str {
    fs::write(root.join("notes.md"), NOTES).expect("write");
    let readme: String = (1..=6)
        .map(|i| {
            format!(
                "Paragraph {i} of the readme describes step {i} of the setup in plain words.\n\n"
            )
        })
        .collect();
    fs::write(root.join("readme.txt"), readme).expect("write");
    fs::write(root.join("lib.rs"), "/// Turns a quasar inside out.\npub fn frobnicate_quasar(x: u32) -> u32 {\n    x.rotate_left(7)\n}\n").expect("write");
    fs::write(
        root.join("page.html"),
        "<html><body><h1>Release</h1><p>Version 9 adds <b>dark mode</b>.</p></body></html>",
    )
    .expect("write");
    let report = pdf(&[
        &["Annual report", "Revenue grew by 12 percent."],
        &["Outlook", "Modest growth is expected."],
    ]);
    fs::write(root.join("report.pdf"), report).expect("write");
    let memo = "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>Memo</w:t></w:r></w:p>\
                <w:p><w:r><w:t>The offsite meets in Lisbon in May.</w:t></w:r></w:p>";
    fs::write(root.join("memo.docx"), docx(memo)).expect("write");
    fs::write(root.join("broken.pdf"), b"%PDF-1.4 this is not a real pdf").expect("write");
    fs::write(root.join("blob.txt"), b"\x00\x01\x02binary").expect("write");
    fs::write(root.join("latin1.md"), b"caf\xe9 au lait").expect("write");
    fs::write(root.join("picture.png"), b"\x89PNG\r\n").expect("write");
    // Nothing to chunk: indexed, with no chunk (an empty chunk has no state).
    fs::write(root.join("empty.md"), " \n\n\t\n").expect("write");
    // A named pipe would block a reader forever; a 40 MB sparse file costs
    // nothing on disk but must not be read into memory.
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("pipe.md"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    fs::File::create(root.join("huge.txt"))
        .and_then(|f| f.set_len(40 << 20))
        .expect("sparse file");
    fs::write(root.join(".gitignore"), "ignored.md\n").expect("write");
    fs::write(root.join("ignored.md"), "never indexed").expect("write");
    fs::create_dir(root.join("sub")).expect("mkdir");
    std::os::unix::fs::symlink(root, root.join("sub/loop")).expect("symlink loop");
    let secret = "The vault combination is 7-3-1-9.";
    fs::write(outside.join("secret.md"), secret).expect("write");
    std::os::unix::fs::symlink(outside.join("secret.md"), root.join("escape.md")).expect("symlink");
    secret
}

#[test]
fn indexes_text_formats_and_reports_every_bad_file() {
    let (cache, root, outside) = (tempdir(), tempdir(), tempdir());
    let secret = fixture(root.path(), outside.path());
    let r = index(cache.path(), root.path());

    assert_eq!(n(&r, "files_indexed"), 8, "{r}");
    let skipped: Vec<(String, String)> = r["files_skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or("").to_string(),
                s["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let reason = |p: &str| {
        skipped
            .iter()
            .find(|(path, _)| path == p)
            .map(|(_, r)| r.clone())
            .unwrap_or_default()
    };
    assert_eq!(reason("blob.txt"), "binary content");
    assert!(
        reason("broken.pdf").contains("unreadable PDF"),
        "{skipped:?}"
    );
    assert_eq!(reason("latin1.md"), "", "Latin-1 text is read: {skipped:?}");
    let noted = r["files_noted"].as_array().expect("notes");
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert_eq!(noted[0]["path"], "latin1.md");
    assert!(noted[0]["note"]
        .as_str()
        .is_some_and(|n| n.contains("Windows-1252")));
    assert_eq!(reason("escape.md"), "symlink leaves the folder");
    assert!(
        skipped.iter().any(|(_, r)| r == "symlink loop"),
        "{skipped:?}"
    );
    assert_eq!(reason("huge.txt"), "larger than 16 MiB");
    assert_eq!(
        reason("pipe.md"),
        "",
        "not a file: passed over, never opened"
    );
    assert_eq!(skipped.len(), 5, "{skipped:?}");
    assert_eq!(
        n(&r, "chunks_encoded") + n(&r, "cache_hits"),
        n(&r, "chunks")
    );
    assert_eq!(n(&r, "chunks_embedded"), n(&r, "chunks"));
    for stage in [
        "walk",
        "extract_chunk",
        "bm25",
        "embed",
        "encode",
        "commit",
        "total",
    ] {
        assert!(r["timings_ms"][stage].is_number(), "{stage}");
    }

    let m = manifest(cache.path());
    let files: Vec<&String> = m["files"].as_object().expect("files").keys().collect();
    assert_eq!(
        files,
        [
            "empty.md",
            "latin1.md",
            "lib.rs",
            "memo.docx",
            "notes.md",
            "page.html",
            "readme.txt",
            "report.pdf"
        ]
    );
    let chunks = m["chunks"].as_object().expect("chunks");
    let report: Vec<&Value> = chunks
        .values()
        .filter(|c| c["path"] == "report.pdf")
        .collect();
    assert_eq!(report.len(), 1);
    assert_eq!(
        report[0]["place"],
        serde_json::json!({"unit": "page", "first": 1, "last": 2})
    );
    assert_eq!(m["files"]["empty.md"]["chunks"], serde_json::json!([]));
    let memo = chunks
        .values()
        .find(|c| c["path"] == "memo.docx")
        .expect("memo chunk");
    assert_eq!(memo["heading"], serde_json::json!(["Memo"]));
    let notes: Vec<&Value> = m["chunks"]
        .as_object()
        .expect("chunks")
        .values()
        .filter(|c| c["path"] == "notes.md")
        .collect();
    assert!(notes.len() >= 2, "64-token chunks split the notes");
    let mut next_line = 1;
    for c in &notes {
        let (a, b) = (
            c["lines"][0].as_u64().unwrap_or(0),
            c["lines"][1].as_u64().unwrap_or(0),
        );
        assert!(a >= next_line && b >= a && b <= 14, "lines {a}-{b}");
        next_line = b + 1;
    }
    let feeding = notes.iter().find(|c| {
        c["heading"]
            .as_array()
            .is_some_and(|h| h.len() == 2 && h[1] == "Feeding")
    });
    assert!(feeding.is_some(), "breadcrumbs reach the Feeding section");
    assert!(!fs::read_to_string(
        cache
            .path()
            .join("indexes")
            .read_dir()
            .expect("dir")
            .flatten()
            .next()
            .expect("index")
            .path()
            .join("manifest.json")
    )
    .expect("read")
    .contains(secret));
}

#[test]
fn reindexing_does_exactly_the_work_that_changed() {
    let (cache, root, outside) = (tempdir(), tempdir(), tempdir());
    fixture(root.path(), outside.path());
    let first = index(cache.path(), root.path());
    let before = manifest(cache.path());
    let chunks_of =
        |m: &Value, p: &str| m["files"][p]["chunks"].as_array().map_or(0, Vec::len) as u64;

    let noop = index(cache.path(), root.path());
    assert_eq!(n(&noop, "files_indexed"), 0);
    assert_eq!(n(&noop, "files_unchanged"), 8);
    assert_eq!(n(&noop, "chunks_encoded") + n(&noop, "chunks_embedded"), 0);
    assert_eq!(n(&noop, "chunks"), n(&first, "chunks"));

    // Edit the last paragraph of readme, delete lib.rs, rename page.html.
    let readme = fs::read_to_string(root.path().join("readme.txt")).expect("read");
    fs::write(
        root.path().join("readme.txt"),
        readme.replace("step 6 of the setup", "the final check"),
    )
    .expect("write");
    fs::remove_file(root.path().join("lib.rs")).expect("rm");
    fs::rename(
        root.path().join("page.html"),
        root.path().join("sub/release.html"),
    )
    .expect("mv");
    let r = index(cache.path(), root.path());
    let after = manifest(cache.path());

    assert_eq!(n(&r, "files_indexed"), 2, "edited + renamed: {r}");
    assert_eq!(n(&r, "files_removed"), 2, "deleted + renamed away: {r}");
    assert_eq!(n(&r, "files_unchanged"), 5, "{r}");
    let removed = chunks_of(&before, "readme.txt")
        + chunks_of(&before, "lib.rs")
        + chunks_of(&before, "page.html");
    let added = chunks_of(&after, "readme.txt") + chunks_of(&after, "sub/release.html");
    assert_eq!(n(&r, "chunks_removed"), removed);
    assert_eq!(n(&r, "chunks_added"), added);
    assert_eq!(n(&r, "chunks"), n(&first, "chunks") - removed + added);
    // Unchanged readme chunks come from the cache; only changed text is encoded.
    assert!(n(&r, "cache_hits") >= 1, "{r}");
    assert_eq!(n(&r, "chunks_encoded") + n(&r, "cache_hits"), added);
    assert!(
        n(&r, "chunks_encoded") <= 1 + chunks_of(&after, "sub/release.html"),
        "{r}"
    );

    // Deleted text is never cited again.
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            "What does frobnicate_quasar do?",
            "--json",
            "--max-tokens",
            "4",
            "--top-k",
            "8",
        ])
        .args(["--chunk-tokens", "64"])
        .arg(root.path())
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    let text = String::from_utf8_lossy(&out.stdout);
    let sources = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "sources")
        .expect("sources");
    let paths: Vec<&str> = sources["sources"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["path"].as_str())
        .collect();
    assert!(!paths.contains(&"lib.rs"), "{paths:?}");
    assert!(paths.contains(&"sub/release.html"), "{paths:?}");
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// Killed (SIGKILL) while the states stage runs: the next run redoes no
/// text or vector work, encodes exactly the states that are missing, and a
/// third run has nothing left to do.
#[test]
fn a_run_killed_mid_caching_resumes_and_stays_consistent() {
    let (cache, root) = (tempdir(), tempdir());
    for i in 0..40 {
        let body: String = (0..6)
            .map(|j| format!("File {i} paragraph {j}: the {i}th lantern burns {j} hours.\n\n"))
            .collect();
        fs::write(root.path().join(format!("doc{i:02}.md")), body).expect("write");
    }
    let mut child = spawn_index(cache.path(), root.path(), std::process::Stdio::null());
    // Wait for the states stage to have stored a few states, then kill
    // without warning.
    let states = |dir: &std::path::Path| -> usize {
        fs::read_dir(dir.join("kv"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|d| {
                fs::read_dir(d.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|f| f.path().extension().is_some_and(|e| e == "kvstate"))
                    .count()
            })
            .sum()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let started = loop {
        let n = states(cache.path());
        if n >= 3 || std::time::Instant::now() > deadline {
            break n >= 3;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    assert!(
        started,
        "the states stage did not start within the deadline"
    );
    assert!(
        !status.success(),
        "the indexer finished before it was killed"
    );
    let stored = states(cache.path());

    let r = index(cache.path(), root.path());
    assert_eq!(
        n(&r, "files_unchanged"),
        40,
        "the text stage was complete: {r}"
    );
    assert_eq!(n(&r, "files_indexed") + n(&r, "chunks_embedded"), 0, "{r}");
    assert!(
        n(&r, "chunks_encoded") >= 1,
        "the kill interrupted real work: {r}"
    );
    assert_eq!(
        n(&r, "chunks_encoded") as usize,
        n(&r, "chunks") as usize - stored,
        "exactly the missing states are encoded ({stored} were stored): {r}"
    );
    assert_eq!(n(&r, "states_deferred"), 0, "{r}");
    let m = manifest(cache.path());
    let listed: usize = m["files"]
        .as_object()
        .expect("files")
        .values()
        .map(|f| f["chunks"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(listed as u64, n(&r, "chunks"));
    let again = index(cache.path(), root.path());
    assert_eq!(
        n(&again, "files_indexed") + n(&again, "chunks_encoded") + n(&again, "chunks_embedded"),
        0,
        "{again}"
    );
}

/// A new prompt is a new prefix: every state is encoded again, once. The
/// old prompt's states stay while the cache budget allows (here far within
/// it), so going back encodes nothing; `cache gc` is what removes them.
#[test]
fn changing_the_system_prompt_re_encodes_every_state_once_and_changing_it_back_none() {
    let (cache, root, outside) = (tempdir(), tempdir(), tempdir());
    fixture(root.path(), outside.path());
    let run = |prompt: Option<&str>| {
        let mut c = ape_chat(cache.path());
        c.args(["index", "--json", "--chunk-tokens", "64"])
            .arg(root.path())
            .arg("--model")
            .arg(tiny_model_path());
        if let Some(p) = prompt {
            c.args(["--system-prompt", p]);
        }
        let out = c.succeed();
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let cache_json = |args: &[&str]| {
        let out = ape_chat(cache.path()).arg("cache").args(args).succeed();
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let first = run(None);
    let changed = run(Some("You are terse."));
    assert_eq!(
        n(&changed, "chunks_encoded"),
        n(&first, "chunks"),
        "new prefix, new states: {changed}"
    );
    assert_eq!(
        n(&changed, "chunks_embedded"),
        0,
        "text and vectors are unchanged"
    );
    let again = run(Some("You are terse."));
    assert_eq!(n(&again, "chunks_encoded"), 0, "{again}");

    let back = run(None);
    assert_eq!(n(&back, "chunks_encoded"), 0, "old states kept: {back}");
    assert_eq!(n(&back, "states_deferred"), 0, "{back}");
    let stats = cache_json(&["stats", "--json"]);
    let terse = n(&stats, "entries") - n(&stats, "referenced");
    assert_eq!(terse, n(&changed, "chunks_encoded"), "{stats}");
    assert_eq!(n(&stats, "referenced"), terse, "one state a chunk: {stats}");

    let gc = cache_json(&["gc", "--json"]);
    assert_eq!(
        (n(&gc, "unreferenced_removed"), n(&gc, "evicted")),
        (terse, 0),
        "{gc}"
    );
    let stats = cache_json(&["stats", "--json"]);
    assert_eq!(
        n(&stats, "referenced"),
        n(&stats, "entries"),
        "the other prompt's states were collected: {stats}"
    );
    let last = run(None);
    assert_eq!(n(&last, "chunks_encoded"), 0, "{last}");
}

/// A question anywhere on the machine holds background work off: while
/// another process waits for or computes an answer (here: this test, holding
/// the machine's question lock), `index` in a second process commits its
/// text and BM25 but embeds and encodes nothing; it carries on once the
/// question is done.
#[test]
fn indexing_in_another_process_yields_to_a_question() {
    use ape_chat::compute::Budget;
    use std::time::{Duration, Instant};

    let (cache, root, outside) = (tempdir(), tempdir(), tempdir());
    fixture(root.path(), outside.path());
    let question = Budget::at(cache.path().join("locks"))
        .question()
        .expect("question lock");
    let mut child = spawn_index(cache.path(), root.path(), std::process::Stdio::piped());
    let committed = || {
        fs::read_dir(cache.path().join("indexes"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|d| d.path().join("manifest.json").is_file())
    };
    let start = Instant::now();
    while !committed() {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "index ended early"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no text stage");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "index finished while a question held the machine"
    );
    let m = manifest(cache.path());
    assert!(m["chunks"].as_object().is_some_and(|c| !c.is_empty()));
    let states = files_under(&cache.path().join("kv"));
    assert!(states.is_empty(), "no state encoded yet: {states:?}");

    drop(question);
    let out = child.wait_with_output().expect("index");
    assert!(out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(n(&r, "chunks_encoded"), n(&r, "chunks"), "{r}");
    assert_eq!(n(&r, "chunks_embedded"), n(&r, "chunks"), "{r}");
}

/// A full disk stops indexing with a clear error and loses nothing: no
/// half-written file is left behind, and once there is room again the
/// next run finishes the job. Needs a small tmpfs (root); skipped where
/// mounting is not allowed.
#[test]
fn a_full_disk_is_a_clear_error_and_the_next_run_recovers() {
    use std::process::Command;

    let (mnt, root, outside) = (tempdir(), tempdir(), tempdir());
    fixture(root.path(), outside.path());
    let mount = |opts: &str| {
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(mnt.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !mount("size=1m") {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(mnt.path());
    let cache = mnt.path();
    let run = || {
        ape_chat(cache)
            .args(["index", "--chunk-tokens", "64"])
            .arg(root.path())
            .arg("--model")
            .arg(tiny_model_path())
            .output()
            .expect("run")
    };
    let out = run();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let leftovers: Vec<_> = files_under(cache)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    assert!(mount("remount,size=256m"), "grow the tmpfs");
    let r = index(cache, root.path());
    assert!(n(&r, "chunks_encoded") > 0, "{r}");
    assert_eq!(n(&r, "states_deferred"), 0, "{r}");
    let again = index(cache, root.path());
    assert_eq!(
        n(&again, "files_indexed") + n(&again, "chunks_encoded") + n(&again, "chunks_embedded"),
        0,
        "everything was done: {again}"
    );
}

#[test]
fn tables_an_older_build_read_are_read_again_for_their_digest_and_nothing_else_is() {
    let (cache, root) = (tempdir(), tempdir());
    fs::write(root.path().join("notes.md"), NOTES).expect("write");
    let csv: String = std::iter::once("name,team\n".to_string())
        .chain((0..30).map(|i| format!("Person {i},{}\n", ["Red", "Blue"][i % 3 / 2])))
        .collect();
    fs::write(root.path().join("people.csv"), csv).expect("write");
    let first = index(cache.path(), root.path());
    assert_eq!(n(&first, "files_indexed"), 2);
    let with_digest = manifest(cache.path());
    let headings = |m: &Value| -> Vec<String> {
        m["chunks"]
            .as_object()
            .expect("chunks")
            .values()
            .filter(|c| c["path"] == "people.csv")
            .map(|c| c["heading"].to_string())
            .collect()
    };
    assert!(
        headings(&with_digest)
            .iter()
            .any(|h| h.contains("Summary of the table")),
        "{:?}",
        headings(&with_digest)
    );
    assert_eq!(with_digest["files"]["people.csv"]["reading"], 1);

    // What an index written before tables had digests looks like: no
    // `reading` in its records.
    let dir = fs::read_dir(cache.path().join("indexes"))
        .expect("indexes")
        .flatten()
        .next()
        .expect("index")
        .path();
    let mut old = with_digest.clone();
    for f in old["files"].as_object_mut().expect("files").values_mut() {
        f.as_object_mut().expect("record").remove("reading");
    }
    fs::write(dir.join("manifest.json"), old.to_string()).expect("write");

    let again = index(cache.path(), root.path());
    assert_eq!(n(&again, "files_indexed"), 1, "only the table: {again}");
    assert_eq!(n(&again, "files_unchanged"), 1, "{again}");
    let after = manifest(cache.path());
    assert_eq!(after["files"]["people.csv"]["reading"], 1);
    assert_eq!(after["files"]["notes.md"], with_digest["files"]["notes.md"]);
    let noop = index(cache.path(), root.path());
    assert_eq!(n(&noop, "files_indexed"), 0, "{noop}");
}

/// A chunk whose state cannot be encoded (here: longer than the engine's
/// context) is skipped with a note naming its file and lines; every other
/// state is still encoded, and the pass ends instead of failing.
#[test]
fn a_chunk_that_cannot_be_encoded_is_skipped_not_blocking_the_rest() {
    use ape_chat::engine::{Engine, EngineOptions};
    use ape_chat::index::dense::EmbedOptions;
    use ape_chat::kvstore::KvStore;
    use ape_chat::workspace::{FolderOptions, Workspace};
    let engine = Engine::load(
        &tiny_model_path(),
        EngineOptions {
            threads: 2,
            ctx_tokens: 256,
            ..EngineOptions::default()
        },
    )
    .expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = tempfile::tempdir().expect("tempdir");
    // One paragraph of about 400 tokens: one chunk, past 256 cells.
    let long: String = (0..45)
        .map(|i| format!("Sentence {i} of the long paragraph goes on. "))
        .collect();
    fs::write(dir.path().join("long.md"), format!("{long}\n")).expect("write");
    fs::write(dir.path().join("notes.md"), NOTES).expect("write");
    let o = FolderOptions {
        chunk_tokens: 600,
        system_prompt: ape_chat::engine::prompt::DEFAULT_SYSTEM_PROMPT.to_string(),
        prefix_newlines: 0,
        embed: EmbedOptions {
            model_dir: crate::common::embed_model_dir(),
            ort_lib: Some(crate::common::ort_lib()),
            threads: 1,
        },
        filters: Default::default(),
        budget_bytes: 1 << 30,
        extraction: Default::default(),
    };
    let mut ws = Workspace::open_in(
        &engine,
        dir.path(),
        Some(cache.path().join("index")),
        &o,
        KvStore::new(cache.path().join("kv")),
    )
    .expect("open")
    .with_budget(ape_chat::compute::Budget::at(cache.path().join("locks")));
    let r = ape_chat::service::index(&mut ws, true, &mut |_| {}).expect("the pass ends");
    assert_eq!(r.chunks_unencodable.len(), 1, "{r:?}");
    assert!(
        r.chunks_unencodable[0]
            .path
            .starts_with("long.md (lines 1-1)"),
        "{r:?}"
    );
    assert_eq!(r.chunks_encoded, r.chunks - 1, "{r:?}");
    assert_eq!(r.states_deferred, 0, "nothing else waits behind it: {r:?}");
}

/// A file that says what an indexed one says is passed over as its copy
/// (named in the report), and the index keeps that true as files change:
/// when the original's text changes the copy is read again as a document
/// of its own, and when the original goes the copy takes its place.
#[test]
fn a_copy_is_read_once_and_follows_its_original() {
    let (cache, root) = (tempdir(), tempdir());
    let r = root.path();
    fs::create_dir_all(r.join("old")).expect("mkdir");
    fs::write(r.join("notes.md"), NOTES).expect("write");
    fs::write(
        r.join("old/notes.md"),
        NOTES.replace("# Field guide", "# Old guide"),
    )
    .expect("write");
    fs::write(
        r.join("other.md"),
        "# Other\n\nNothing like the rest at all.\n",
    )
    .expect("write");
    let skipped_as_copy = |report: &Value| -> Vec<(String, String)> {
        report["files_skipped"]
            .as_array()
            .expect("skipped")
            .iter()
            .filter(|s| s["reason"].as_str().unwrap_or("").contains("a copy of"))
            .map(|s| {
                (
                    s["path"].as_str().unwrap_or("").to_string(),
                    s["reason"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let files = |cache: &Path| -> Vec<String> {
        let m = manifest(cache);
        m["files"]
            .as_object()
            .expect("files")
            .keys()
            .cloned()
            .collect()
    };
    let first = index(cache.path(), r);
    // The first in the walk's order is read; the other is its copy.
    let copies = skipped_as_copy(&first);
    assert_eq!(copies.len(), 1, "{first}");
    assert_eq!(copies[0].0, "old/notes.md");
    assert!(copies[0].1.contains("notes.md"), "{copies:?}");
    assert_eq!(files(cache.path()), ["notes.md", "other.md"]);
    // A run with nothing changed keeps it so, reading nothing.
    let noop = index(cache.path(), r);
    assert_eq!(n(&noop, "files_indexed"), 0, "{noop}");
    assert_eq!(skipped_as_copy(&noop).len(), 1, "{noop}");

    // The original says something else now: the copy is a document.
    fs::write(
        r.join("notes.md"),
        NOTES.replace("forty nests", "sixty nests"),
    )
    .expect("write");
    let changed = index(cache.path(), r);
    assert!(skipped_as_copy(&changed).is_empty(), "{changed}");
    assert_eq!(n(&changed, "files_indexed"), 2, "{changed}");
    assert_eq!(
        files(cache.path()),
        ["notes.md", "old/notes.md", "other.md"]
    );

    // The same again: now the original copies its copy, which stays.
    fs::write(r.join("notes.md"), NOTES).expect("write");
    let again = index(cache.path(), r);
    let copies = skipped_as_copy(&again);
    assert_eq!(copies.len(), 1, "{again}");
    assert_eq!(copies[0].0, "notes.md");
    assert!(copies[0].1.contains("old/notes.md"), "{copies:?}");
    assert_eq!(files(cache.path()), ["old/notes.md", "other.md"]);
    // The file it copied goes: it is read again, and a new copy is one.
    fs::remove_file(r.join("old/notes.md")).expect("rm");
    fs::write(r.join("old/notes2.md"), NOTES).expect("write");
    let renamed = index(cache.path(), r);
    let copies = skipped_as_copy(&renamed);
    assert_eq!(copies.len(), 1, "{renamed}");
    assert_eq!(copies[0].0, "old/notes2.md", "{renamed}");
    assert_eq!(files(cache.path()), ["notes.md", "other.md"]);
    fs::remove_file(r.join("notes.md")).expect("rm");
    let gone = index(cache.path(), r);
    assert!(skipped_as_copy(&gone).is_empty(), "{gone}");
    assert_eq!(files(cache.path()), ["old/notes2.md", "other.md"], "{gone}");

    // Every file read, copies too, when asked for.
    fs::write(r.join("notes.md"), NOTES).expect("write");
    let all = ape_chat(cache.path())
        .args(["index", "--json", "--all-files", "--chunk-tokens", "64"])
        .arg(r)
        .arg("--model")
        .arg(tiny_model_path())
        .succeed();
    let all: Value = serde_json::from_slice(&all.stdout).expect("json");
    assert!(skipped_as_copy(&all).is_empty(), "{all}");
    assert_eq!(
        files(cache.path()),
        ["notes.md", "old/notes2.md", "other.md"]
    );
}

//! Every format we read, from files written by independent writers
//! (`scripts/make-fixtures.py`: python-pptx, openpyxl, odfpy, ebooklib,
//! Python's email and mailbox): a question whose answer is only in that
//! file must cite it, at its page, slide, sheet row, chapter, message or
//! cell. And bad files (encrypted, zip bombs, truncated, binary) are
//! skipped with a reason while the rest of the folder is indexed, in
//! bounded memory.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::{ape_chat, flate_pdf, tiny_model_path, Succeed};

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

fn index(cache: &Path, dir: &Path) -> Value {
    let out = ape_chat(cache)
        .args(["index", "--json", "--chunk-tokens", "64", "--model"])
        .arg(tiny_model_path())
        .arg(dir)
        .succeed();
    serde_json::from_slice(&out.stdout).expect("json report")
}

/// The top source of `question`'s answer: its path and its place as
/// `--json` reports it (`location.text`, or `None`).
fn top_source(cache: &Path, dir: &Path, question: &str) -> (String, Option<String>, Value) {
    let out = ape_chat(cache)
        .args(["--ask", question, "--json", "--max-tokens", "2"])
        .args(["--chunk-tokens", "64", "--top-k", "3", "--model"])
        .arg(tiny_model_path())
        .arg(dir)
        .succeed();
    let sources = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "sources")
        .expect("a sources line");
    let top = sources["sources"][0].clone();
    (
        top["path"].as_str().unwrap_or("").to_string(),
        top["location"]["text"].as_str().map(String::from),
        top,
    )
}

#[test]
fn a_question_answered_from_each_format_cites_the_file_at_its_place() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = fixtures().join("formats");
    let r = index(cache.path(), &dir);
    assert_eq!(r["files_skipped"], serde_json::json!([]), "{r}");
    assert_eq!(r["files_indexed"], 14, "{r}");
    // (question, file, the fact's unit, its number, its sheet row): the
    // cited chunk may span neighbouring units, and must include this one.
    let cases = [
        (
            "When is the Heron launch scheduled?",
            "review.pptx",
            Some(("slide", 2, None)),
        ),
        (
            "Where is lunch served at the offsite?",
            "offsite.odp",
            Some(("slide", 2, None)),
        ),
        (
            "What team is Marisol Quintero in?",
            "staff.xlsx",
            Some(("sheet", 1, Some(42))),
        ),
        (
            "How many lantern wicks are in the inventory?",
            "staff.xlsx",
            Some(("sheet", 2, Some(2))),
        ),
        (
            "When is high tide at Solva?",
            "tides.ods",
            Some(("sheet", 1, Some(3))),
        ),
        (
            "Who surveyed the harbour mouth?",
            "tides.csv",
            Some(("sheet", 1, Some(3))),
        ),
        (
            "Which vessel is moored at berth B5?",
            "moorings.tsv",
            Some(("sheet", 1, Some(3))),
        ),
        (
            "Where did the crew paint the ship's name in Horta?",
            "voyages.epub",
            Some(("chapter", 2, None)),
        ),
        (
            "When is the standby generator tested?",
            "generator.eml",
            Some(("message", 1, None)),
        ),
        (
            "Where does the spare key to the radio room hang?",
            "station.mbox",
            Some(("message", 2, None)),
        ),
        (
            "What is monthly churn among annual subscribers?",
            "churn.ipynb",
            Some(("cell", 3, None)),
        ),
        (
            "Where do kestrels on Skomer island nest?",
            "guide.odt",
            None,
        ),
        ("How often does the fog signal sound?", "NOTES", None),
        ("Where are the flares kept?", "inventory.xml", None),
        ("What frequency was the beacon set to?", "beacon.log", None),
    ];
    for (question, file, want) in cases {
        let (path, text, top) = top_source(cache.path(), &dir, question);
        assert_eq!(path, file, "{question}: {top}");
        let loc = &top["location"];
        let Some((unit, number, row)) = want else {
            assert!(loc.is_null(), "{question}: lines only: {top}");
            continue;
        };
        assert_eq!(loc["unit"], unit, "{question}: {top}");
        let within = |v: &Value, x: u64| {
            v.as_array()
                .and_then(|r| Some((r.first()?.as_u64()?, r.get(1)?.as_u64()?)))
                .is_some_and(|(a, b)| a <= x && x <= b)
        };
        let span = serde_json::json!([loc["first"], loc["last"]]);
        assert!(within(&span, number), "{question}: {unit} {number}: {top}");
        if let Some(row) = row {
            assert!(within(&loc["rows"], row), "{question}: row {row}: {top}");
        }
        // The human form, as `--ask` prints it after the path.
        assert!(
            text.is_some_and(|t| t.starts_with(unit) || t.starts_with("rows")),
            "{top}"
        );
    }
}

/// A zip with one deflated entry of `size` zeros, its declared sizes
/// rewritten to `declare` (a bomb that lies about its size) unless equal.
fn zeros_zip(name: &str, size: usize, declare: u32) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    z.start_file(name, opts).expect("zip");
    let block = vec![0u8; 1 << 20];
    for _ in 0..size / block.len() {
        z.write_all(&block).expect("zip");
    }
    z.finish().expect("zip");
    let mut bytes = buf.into_inner();
    let real = (size as u32).to_le_bytes();
    if declare as usize != size {
        let at: Vec<usize> = (0..bytes.len() - 4)
            .filter(|&i| bytes[i..i + 4] == real)
            .collect();
        assert_eq!(at.len(), 2, "local header and central directory");
        for i in at {
            bytes[i..i + 4].copy_from_slice(&declare.to_le_bytes());
        }
    }
    bytes
}

/// Peak resident memory of a running process, polled until it exits.
fn peak_rss_mb(mut child: std::process::Child) -> (u64, std::process::ExitStatus) {
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(s) = fs::read_to_string(&status_file) {
            if let Some(kb) = s
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
            {
                peak = peak.max(kb / 1024);
            }
        }
        if let Some(status) = child.try_wait().expect("wait") {
            return (peak, status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn bad_documents_are_skipped_with_a_reason_in_bounded_memory() {
    let (cache, dir) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let d = dir.path();
    fs::copy(fixtures().join("faults/locked.docx"), d.join("locked.docx")).expect("copy");
    let xlsx = fs::read(fixtures().join("formats/staff.xlsx")).expect("fixture");
    fs::write(d.join("cut.xlsx"), &xlsx[..xlsx.len() / 2]).expect("write");
    // 1 GiB of zeros, deflated to about a megabyte: declared honestly…
    let gib = 1 << 30;
    fs::write(
        d.join("bomb.docx"),
        zeros_zip("word/document.xml", gib, gib as u32),
    )
    .expect("w");
    // …and lying: it claims 1 KiB, so only reading it would tell.
    fs::write(d.join("liar.xlsx"), zeros_zip("xl/workbook.xml", gib, 1024)).expect("w");
    fs::write(d.join("binary.txt"), b"\x7fELF\x02\x01\x01\x00\x00\x00").expect("write");
    let malformed = "<office:document-content><office:body><text:p>open";
    let odt = {
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        z.start_file("content.xml", zip::write::SimpleFileOptions::default())
            .expect("zip");
        z.write_all(malformed.as_bytes()).expect("zip");
        z.finish().expect("zip");
        buf.into_inner()
    };
    fs::write(d.join("malformed.odt"), odt).expect("write");
    fs::write(
        d.join("notes.md"),
        "The lighthouse keeper logs the weather at six.\n",
    )
    .expect("write");

    let child = ape_chat(cache.path())
        .args(["index", "--json", "--chunk-tokens", "64", "--model"])
        .arg(tiny_model_path())
        .arg(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let (peak, child_out) = {
        let mut child = child;
        let mut out = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut out, &mut s).expect("read");
            s
        });
        let (peak, status) = peak_rss_mb(child);
        assert!(status.success(), "index failed");
        (peak, reader.join().expect("reader"))
    };
    let r: Value = serde_json::from_str(&child_out).expect("json report");
    assert_eq!(r["files_indexed"], 1, "{r}");
    let reason = |p: &str| -> String {
        r["files_skipped"]
            .as_array()
            .expect("skipped")
            .iter()
            .find(|s| s["path"] == p)
            .and_then(|s| s["reason"].as_str())
            .unwrap_or_else(|| panic!("{p} not skipped: {r}"))
            .to_string()
    };
    assert!(reason("locked.docx").starts_with("encrypted DOCX"), "{r}");
    assert!(reason("cut.xlsx").contains("truncated"), "{r}");
    assert!(reason("bomb.docx").contains("zip bomb"), "{r}");
    assert!(reason("liar.xlsx").contains("declared size"), "{r}");
    assert_eq!(reason("binary.txt"), "binary content");
    assert!(reason("malformed.odt").starts_with("malformed ODT"), "{r}");
    // The bound: the tiny model and the embedder (a few hundred MB) plus
    // at most one inflated entry's limit; reading either bomb would take
    // a gigabyte more.
    assert!(peak < 1024, "peak RSS {peak} MB");
}

fn skipped_reason(r: &Value, path: &str) -> String {
    r["files_skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .find(|s| s["path"] == path)
        .and_then(|s| s["reason"].as_str())
        .unwrap_or_else(|| panic!("{path} not skipped: {r}"))
        .to_string()
}

/// A small PDF that inflates to gigabytes, a page of a million empty
/// styles and a 200 KB line with no space: the bomb is skipped with its
/// reason (in bounded memory), the other two are read, and the folder
/// answers from the rest.
#[test]
fn a_pdf_bomb_a_pathological_page_and_an_unbroken_line_cost_only_themselves() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // 2 GiB of zeros in 256 streams of 8 MiB, about 2 MB on disk.
    let block = {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![0u8; 8 << 20]).expect("compress");
        z.finish().expect("compress")
    };
    let mut bomb = b"%PDF-1.7\n".to_vec();
    for i in 0..256 {
        bomb.extend_from_slice(
            format!(
                "{} 0 obj\n<< /Length {} /Filter /FlateDecode >>\nstream\n",
                i + 1,
                block.len()
            )
            .as_bytes(),
        );
        bomb.extend_from_slice(&block);
        bomb.extend_from_slice(b"\nendstream\nendobj\n");
    }
    bomb.extend_from_slice(b"trailer << /Root 1 0 R >>\n%%EOF\n");
    fs::write(d.join("bomb.pdf"), &bomb).expect("write");
    fs::write(
        d.join("styles.html"),
        "<style></style>".repeat(1_000_000) + "<p>The harbour gate opens at dawn.</p>",
    )
    .expect("write");
    let uri = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo".repeat(6_000);
    fs::write(
        d.join("logo.md"),
        format!("# Logo\n\n<img src=\"data:image/png;base64,{uri}\">\n\nThe logo is teal.\n"),
    )
    .expect("write");
    fs::write(
        d.join("notes.md"),
        "The lighthouse keeper logs the weather at six.\n",
    )
    .expect("write");
    let out = ape_chat(cache.path())
        .args(["index", "--json", "--no-states", "--model"])
        .arg(tiny_model_path())
        .arg(d)
        .succeed();
    let r: Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert!(
        skipped_reason(&r, "bomb.pdf").contains("decompression bomb"),
        "{r}"
    );
    assert_eq!(r["files_indexed"], 3, "{r}");
    assert!(
        r["chunks"].as_u64().unwrap_or(0) > 100,
        "the line in pieces: {r}"
    );
    // Answers come from the others; the line's pieces encode like any
    // chunk (one alone was past the context and failed on every pass).
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            "When does the harbour gate open?",
            "--json",
            "--max-tokens",
            "2",
        ])
        .args(["--quality", "fast", "--top-k", "5", "--model"])
        .arg(tiny_model_path())
        .arg(d)
        .succeed();
    let lines = crate::common::json_lines(&out.stdout);
    let sources = crate::common::record(&lines, "sources");
    assert_eq!(sources["sources"][0]["path"], "styles.html", "{sources}");
    let stats = crate::common::record(&lines, "stats");
    assert_eq!(stats["chunks_read"], 5, "{stats}");
    let logo = sources["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter(|s| s["path"] == "logo.md")
        .count();
    assert!(
        logo > 0,
        "a piece of the line was read and encoded: {sources}"
    );
}

/// A file that needs more memory, or more time, than its reader may take
/// ends only its worker process: it is skipped with the reason, the rest
/// is indexed, and it is not read again until it changes.
#[test]
fn a_reader_past_its_memory_or_time_cap_skips_only_its_file() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // 60 MB of text operators: under the inflation cap, over 30 MB.
    let content = "BT /F1 12 Tf 72 720 Td (heavy) Tj ET\n".repeat(1_600_000);
    fs::write(d.join("heavy.pdf"), flate_pdf(content.as_bytes())).expect("write");
    fs::write(
        d.join("notes.md"),
        "The lighthouse keeper logs the weather at six.\n",
    )
    .expect("write");
    let index = |args: &[&str]| -> Value {
        let out = ape_chat(cache.path())
            .args(["index", "--json", "--no-states", "--model"])
            .arg(tiny_model_path())
            .args(args)
            .arg(d)
            .succeed();
        serde_json::from_slice(&out.stdout).expect("json report")
    };
    let r = index(&["--extract-memory-gb", "0.03"]);
    assert!(
        skipped_reason(&r, "heavy.pdf").contains("needed more than 30 MB of memory"),
        "{r}"
    );
    assert_eq!(r["files_indexed"], 1, "{r}");
    // Unchanged, it is not read again: the reason stands, even with caps
    // that would let it through.
    let r = index(&[]);
    assert!(skipped_reason(&r, "heavy.pdf").contains("memory"), "{r}");
    assert_eq!(r["files_indexed"], 0, "{r}");
    // Changed, it is read again, now against the time cap.
    let content = "BT /F1 12 Tf 72 720 Td (heavy) Tj ET\n".repeat(1_500_000);
    fs::write(d.join("heavy.pdf"), flate_pdf(content.as_bytes())).expect("write");
    let r = index(&["--extract-timeout", "0.05"]);
    assert!(
        skipped_reason(&r, "heavy.pdf").contains("took longer than 0.05 s"),
        "{r}"
    );
}

//! Shared fixtures: the tiny model, loaded once per test binary.

use std::path::PathBuf;
use std::sync::OnceLock;

use ape_chat::engine::{Engine, EngineOptions, PromptLayout};

/// Path of the tiny test model (`APE_CHAT_TEST_MODEL` overrides).
pub fn tiny_model_path() -> PathBuf {
    let path = std::env::var_os("APE_CHAT_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| ape_chat::paths::models_dir().join(ape_chat::paths::TINY_MODEL_FILE));
    assert!(
        path.is_file(),
        "test model {} missing: run scripts/setup.sh --tiny",
        path.display()
    );
    path
}

/// The default chat model (Qwen2.5-Coder-1.5B), for the tests that check
/// real answers: the tiny model is too small to answer reliably.
pub fn default_model_path() -> PathBuf {
    let path = ape_chat::paths::models_dir().join(ape_chat::paths::DEFAULT_MODEL_FILE);
    assert!(
        path.is_file(),
        "{} missing: run scripts/setup.sh",
        path.display()
    );
    path
}

/// Gemma 3 270M (`scripts/setup.sh --tiny`): a base model with sliding-window
/// attention and no chat template, where APE is unsupported.
pub fn gemma_model_path() -> PathBuf {
    let path = ape_chat::paths::models_dir().join("gemma-3-270m-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "test model {} missing: run scripts/setup.sh --tiny",
        path.display()
    );
    path
}

/// The tiny model, shared by every test in this binary.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let opts = EngineOptions {
            ctx_tokens: 4096,
            threads: 2,
            ..EngineOptions::default()
        };
        Engine::load(&tiny_model_path(), opts).expect("load tiny model")
    })
}

/// What `prefill` answers over: `chunks` in the given order, ranked in it.
pub fn context<'a>(
    prefix: &'a ape_chat::engine::PrefixState,
    chunks: &'a [&'a ape_chat::engine::ChunkState],
    question: &'a [ape_chat::engine::TokenId],
) -> ape_chat::engine::generate::Context<'a> {
    const RANKING: [usize; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    ape_chat::engine::generate::Context {
        prefix,
        chunks,
        ranking: &RANKING[..chunks.len()],
        question,
    }
}

/// The default prompt layout of the tiny model.
pub fn layout() -> PromptLayout {
    PromptLayout::new(engine(), ape_chat::engine::prompt::DEFAULT_SYSTEM_PROMPT).expect("layout")
}

/// The embedding model installed by `scripts/setup.sh` (tests that isolate
/// the cache dir must point the binary at it).
pub fn embed_model_dir() -> PathBuf {
    ape_chat::paths::cache_dir().join("embed/all-MiniLM-L6-v2")
}

/// The ONNX Runtime library installed by `scripts/setup.sh`.
pub fn ort_lib() -> PathBuf {
    ape_chat::paths::cache_dir().join("lib/libonnxruntime.so.1.31.1")
}

/// A valid PDF with one page per entry of `pages` (Helvetica text lines),
/// built by hand so tests need no PDF tooling.
pub fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    let n = pages.len();
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {n} >>",
            (0..n)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into(),
    ];
    for (i, lines) in pages.iter().enumerate() {
        let mut content = String::from("BT /F1 12 Tf 72 720 Td 16 TL\n");
        for l in lines.iter() {
            content.push_str(&format!(
                "({}) Tj T*\n",
                l.replace('\\', "\\\\")
                    .replace('(', "\\(")
                    .replace(')', "\\)")
            ));
        }
        content.push_str("ET");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    assemble(objects.iter().map(|o| o.as_bytes().to_vec()).collect())
}

/// A one-page PDF whose content stream is Flate-compressed `content`.
pub fn flate_pdf(content: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(content).expect("compress");
    let data = z.finish().expect("compress");
    assemble(vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>".to_vec(),
        [
            format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", data.len()).into_bytes(),
            data,
            b"\nendstream".to_vec(),
        ]
        .concat(),
    ])
}

/// A PDF of `objects` (numbered from 1, the first the catalog), with its
/// cross-reference table.
fn assemble(objects: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A minimal `.docx` holding `body` (WordprocessingML paragraphs).
pub fn docx(body: &str) -> Vec<u8> {
    use std::io::Write;
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    z.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .expect("zip");
    let xml = format!("<?xml version=\"1.0\"?><w:document><w:body>{body}</w:body></w:document>");
    z.write_all(xml.as_bytes()).expect("zip");
    z.finish().expect("zip");
    buf.into_inner()
}

/// The binary with an isolated cache and config (in `cache`), the test
/// embedding model and ORT, and no inherited `APE_CHAT_*` settings.
pub fn ape_chat(cache: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ape-chat"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("APE_CHAT_") {
            c.env_remove(key);
        }
    }
    c.env("APE_CHAT_CACHE_DIR", cache)
        .env("APE_CHAT_CONFIG", cache.join("config.toml"))
        .env("APE_CHAT_EMBED_MODEL", embed_model_dir())
        .env("ORT_DYLIB_PATH", ort_lib())
        .env("NO_COLOR", "1");
    c
}

/// Running a command that must succeed, showing its stderr if it does not.
pub trait Succeed {
    fn succeed(&mut self) -> std::process::Output;
}

impl Succeed for std::process::Command {
    fn succeed(&mut self) -> std::process::Output {
        let out = self.output().expect("run");
        assert!(
            out.status.success(),
            "{:?} failed:\n{}",
            self.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// The prefix state of the default layout and the states of `SAMPLE_CHUNKS`.
pub fn sample_states(
    s: &mut ape_chat::engine::Session<'_>,
) -> (
    ape_chat::engine::PrefixState,
    Vec<ape_chat::engine::ChunkState>,
) {
    let (e, l) = (engine(), layout());
    let prefix = s.encode_prefix(&l.prefix).expect("prefix");
    let chunks = ape_chat::engine::check::SAMPLE_CHUNKS
        .iter()
        .map(|t| s.encode_chunk(&prefix, &l.chunk(e, t)).expect("chunk"))
        .collect();
    (prefix, chunks)
}

/// Every file under `dir`, recursively (none if it does not exist).
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `ape-chat index --json --chunk-tokens 64 DIR` on the tiny model, started
/// in the background with stdout as given and stderr discarded.
pub fn spawn_index(
    cache: &std::path::Path,
    dir: &std::path::Path,
    stdout: std::process::Stdio,
) -> std::process::Child {
    ape_chat(cache)
        .args(["index", "--json", "--chunk-tokens", "64"])
        .arg(dir)
        .arg("--model")
        .arg(tiny_model_path())
        .stdout(stdout)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn")
}

/// A command's JSON Lines output, one value per line.
pub fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// The first record of `kind` (`"type": kind`) among `lines`.
pub fn record<'a>(lines: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|v| v["type"] == kind)
        .unwrap_or_else(|| panic!("no `{kind}` record"))
}

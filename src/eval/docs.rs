//! Questions over real documentation folders, answered as a user's
//! `--ask` is: each folder indexed with the default chunking (text, then
//! vectors: hybrid retrieval), each question answered by
//! [`Workspace::ask`] with the chunks retrieval ranks, and scored right or
//! wrong by a regular expression written from the text before any run.
//!
//! SQuAD paragraphs (what the presets were first tuned on) are clean prose;
//! a user's folder is more often HTML with code blocks, commands, tables
//! and near-duplicate pages. This set is that kind (docs/results.md, Right on real
//! documents), and its questions are split in two halves by file
//! ([`Half`]) so that settings chosen on one are judged on the other.
//!
//! Rows are appended to a JSON Lines file as they are made; a rerun with
//! the same model, prefix, retrieval and decoding answers only what is
//! missing.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::stats::{bootstrap, paired_difference, ratio_of_means, Clusters, Estimate};
use crate::answer::AskOptions;
use crate::engine::{Engine, GenerateOptions, Mode};
use crate::index::IndexProgress;
use crate::kvstore::KvStore;
use crate::workspace::{FolderOptions, Step, Workspace, WorkspaceError};

/// Why a real-documents run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}, line {line}: {why}")]
    Question {
        path: PathBuf,
        line: usize,
        why: String,
    },
    /// Opening or indexing a folder (the error names it).
    #[error(transparent)]
    Folder(WorkspaceError),
    #[error("{id}: {error}")]
    Ask { id: String, error: WorkspaceError },
    #[error("state store: {0}")]
    Store(String),
    #[error("stopped")]
    Cancelled,
}

/// One question over one folder: its answer is a regular expression over
/// the answer text (case-insensitive), and `evidence` the sentence of
/// `file` it was written from (checked to match, so a question can only
/// ask what its page says).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub id: String,
    /// The documentation tree `folder` is in (rustup's unless named).
    #[serde(default, skip_serializing_if = "Docs::is_rust")]
    pub docs: Docs,
    /// The folder answered from, relative to its tree's root (one book).
    pub folder: String,
    /// The page the question was written from, relative to `folder`.
    pub file: String,
    pub question: String,
    pub answer: String,
    pub evidence: String,
    /// The reference answer whose likelihood is measured ([`Self::gold`]);
    /// when absent, the text the pattern matches in the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
}

/// The documentation trees a question's folder can be in: each is a
/// different writer's HTML (mdBook and rustdoc, Sphinx), installed with
/// the toolchain or by `scripts/setup.sh`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Docs {
    /// rustup's, `$(rustc --print sysroot)/share/doc/rust/html`.
    #[default]
    Rust,
    /// Debian's python3-doc, [`PYTHON_DOCS`].
    Python3,
}

/// Where Debian's python3-doc puts its HTML (`scripts/setup.sh` installs
/// it).
pub const PYTHON_DOCS: &str = "/usr/share/doc/python3/html";

impl Docs {
    fn is_rust(&self) -> bool {
        *self == Docs::Rust
    }
}

/// Where each documentation tree is on this machine.
pub struct Roots {
    pub rust: PathBuf,
    pub python3: PathBuf,
}

impl Roots {
    /// The folder `q` is answered from.
    pub fn folder(&self, q: &Question) -> PathBuf {
        match q.docs {
            Docs::Rust => self.rust.join(&q.folder),
            Docs::Python3 => self.python3.join(&q.folder),
        }
    }
}

/// The two halves of the set, by page: settings are chosen on `tune` and
/// reported on `report`, so nothing is judged by what it was tuned on.
/// Questions of one page are always in one half (a page's questions share
/// its difficulty).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Half {
    Tune,
    Report,
    /// Both halves (for the smoke slice and for looking, never for
    /// choosing).
    All,
}

impl Question {
    /// The half this question's page falls in: the first bit of the page
    /// path's BLAKE3, fixed before any run.
    pub fn half(&self) -> Half {
        if blake3::hash(self.page().as_bytes()).as_bytes()[0] & 1 == 0 {
            Half::Tune
        } else {
            Half::Report
        }
    }

    /// The folder as tables name it: Python's under `python3/`, so that
    /// its `reference` is not the Rust Reference.
    fn folder_name(&self) -> String {
        match self.docs {
            Docs::Rust => self.folder.clone(),
            Docs::Python3 => format!("python3/{}", self.folder),
        }
    }

    fn page(&self) -> String {
        format!("{}/{}", self.folder_name(), self.file)
    }

    fn pattern(&self) -> Result<regex::Regex, regex::Error> {
        regex::RegexBuilder::new(&self.answer)
            .case_insensitive(true)
            .build()
    }

    /// The reference answer teacher-forced after the question: `gold` as
    /// written, else the span of the evidence the pattern matches (the
    /// answer as the page says it, "target/release", "16"), as extractive
    /// sets take their gold answers. Empty only if neither exists, which
    /// [`load`] refuses.
    pub fn gold(&self) -> String {
        if let Some(g) = &self.gold {
            return g.clone();
        }
        self.pattern()
            .ok()
            .and_then(|p| p.find(&self.evidence).map(|m| m.as_str().to_string()))
            .unwrap_or_default()
    }

    /// Whether `text` answers the question.
    pub fn is_right(&self, text: &str) -> bool {
        self.pattern().is_ok_and(|p| p.is_match(text))
    }

    /// What a row's answer is reused for: the question asked over its
    /// folder. Not its pattern: a reused answer is scored again by the
    /// pattern of the day, so a tightened pattern costs no re-answer.
    fn asked_hash(&self) -> String {
        let mut h = blake3::Hasher::new();
        for part in [&self.folder_name(), &self.file, &self.question] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        h.finalize().to_hex()[..16].to_string()
    }
}

/// Reads the questions of `path` (JSON Lines), each checked: unique id, a
/// pattern that compiles and matches its own evidence, a reference answer.
pub fn load(path: &Path) -> Result<Vec<Question>, DocsError> {
    let io = |error| DocsError::Io {
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| DocsError::Question {
            path: path.to_path_buf(),
            line: i + 1,
            why,
        };
        let q: Question = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
        let pattern = q
            .pattern()
            .map_err(|e| bad(format!("answer pattern: {e}")))?;
        if !pattern.is_match(&q.evidence) {
            return Err(bad(format!(
                "{}: the answer pattern does not match its own evidence",
                q.id
            )));
        }
        if q.gold().trim().is_empty() {
            return Err(bad(format!(
                "{}: no reference answer (no `gold`, and the pattern matches nothing of the evidence)",
                q.id
            )));
        }
        if !seen.insert(q.id.clone()) {
            return Err(bad(format!("{}: a second question with this id", q.id)));
        }
        out.push(q);
    }
    Ok(out)
}

/// How many pages `questions` were written from (the clusters of every
/// interval).
pub fn pages(questions: &[Question]) -> usize {
    questions
        .iter()
        .map(Question::page)
        .collect::<HashSet<_>>()
        .len()
}

/// A way to answer, as the report names it: a preset (`exact`, `fast`,
/// `balanced`, resolved as `--ask` resolves it) or a mode spec.
#[derive(Clone, Debug)]
pub struct Setting {
    pub label: String,
    pub mode: Mode,
    /// `balanced`'s whole-chunk mode (over named files and on a GPU).
    pub whole_mode: Option<Mode>,
}

/// One question answered in one setting.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub page: String,
    pub label: String,
    /// The mode in full (a preset's label can change meaning; this cannot).
    pub mode: String,
    pub key: String,
    pub answer: String,
    pub right: bool,
    /// Whether a retrieved chunk came from the question's page.
    pub page_retrieved: bool,
    /// Where the question's page ranked among the sources (1 = best).
    pub page_rank: Option<usize>,
    pub ttft_ms: f64,
    pub prompt_tokens: usize,
    /// States encoded for this answer (0 when states are cached, as timed).
    pub states_encoded: usize,
    /// Each answer token's log-probability as it was drawn (greedy: its
    /// logit's log-softmax): how sure the model was, for a confidence
    /// check to be judged by.
    #[serde(default)]
    pub logprobs: Vec<f32>,
    /// The setting's first tokens failed its doubt check: sequential
    /// prefill answered (`logprobs` are then that answer's).
    #[serde(default)]
    pub doubted: bool,
    /// The reference answer's ([`Question::gold`]) mean negative
    /// log-likelihood per token, teacher-forced after the question in the
    /// context that answered (sequential's for a doubted answer).
    #[serde(default)]
    pub gold_nll: Option<f64>,
    pub code: String,
}

/// What a run is: where the folders are, the questions, the settings, the
/// retrieval and decoding they share, and where rows go.
pub struct Plan<'a> {
    pub roots: &'a Roots,
    pub questions: &'a [Question],
    pub settings: &'a [Setting],
    /// Retrieval and decoding (the mode fields are set per setting).
    pub options: AskOptions,
    pub results: &'a Path,
}

/// The identity of the rows a run can reuse: model, prefix, chunking,
/// retrieval, decoding and the mode, with the question's content.
fn row_key(ws: &Workspace<'_>, plan: &Plan<'_>, chunk_tokens: usize, mode: &Mode) -> String {
    let mut h = blake3::Hasher::new();
    h.update(ws.states.engine.info().id.to_string().as_bytes());
    h.update(&ws.states.prefix.id().0);
    let o = &plan.options;
    h.update(
        format!(
            "{chunk_tokens}|{:?}|{:?}|{}|{mode}|v2",
            o.top_k, o.retrieval, o.generate.max_tokens
        )
        .as_bytes(),
    );
    h.finalize().to_hex()[..16].to_string()
}

/// Where a run stands: rows done of those planned, and what it is doing.
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub doing: &'a str,
}

/// Answers every question of `plan` in every setting that its results file
/// does not hold yet, folder by folder, and returns all the plan's rows.
/// Each question's states are encoded first by an untimed answer, so the
/// timed ones read them cached (as a folder indexed ahead answers).
pub fn run(
    engine: &Engine,
    folder: &FolderOptions,
    store: &dyn Fn() -> Result<KvStore, DocsError>,
    plan: &Plan<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Row>, DocsError> {
    let mut have = read_rows(plan.results)?;
    let total = plan.questions.len() * plan.settings.len();
    let mut out = Vec::new();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(plan.results)
        .map_err(|error| DocsError::Io {
            path: plan.results.to_path_buf(),
            error,
        })?;
    for (name, questions) in by_folder(plan.questions) {
        let dir = plan.roots.folder(questions[0]);
        let folder_err = DocsError::Folder;
        let mut ws = Workspace::open(engine, &dir, folder, store()?).map_err(folder_err)?;
        let keys: Vec<String> = plan
            .settings
            .iter()
            .map(|s| row_key(&ws, plan, folder.chunk_tokens, &s.mode))
            .collect();
        let missing = |q: &Question, have: &BTreeMap<(String, String), Row>| {
            keys.iter()
                .any(|k| !have.contains_key(&(k.clone(), q.asked_hash())))
        };
        if questions.iter().any(|q| missing(q, &have)) {
            let doing = format!("indexing {name}");
            progress(Progress {
                done: out.len(),
                total,
                doing: &doing,
            });
            index_shown(&mut ws, &name, (out.len(), total), cancel, progress)?;
        }
        for q in questions {
            let gold = engine.tokenize(q.gold().trim());
            let warm = missing(q, &have);
            if warm {
                // Encodes the states of the chunks retrieval picks (every
                // setting retrieves the same ones); untimed.
                let cached = plan
                    .settings
                    .iter()
                    .find(|s| s.mode.chunks_alone().is_some());
                if let Some(s) = cached {
                    let options = AskOptions {
                        mode: s.mode,
                        whole_mode: None,
                        generate: GenerateOptions {
                            max_tokens: 1,
                            ..plan.options.generate.clone()
                        },
                        ..plan.options.clone()
                    };
                    ask(&mut ws, q, &options, cancel)?;
                }
            }
            for (s, key) in plan.settings.iter().zip(&keys) {
                if cancel.load(Ordering::Relaxed) {
                    return Err(DocsError::Cancelled);
                }
                let slot = (key.clone(), q.asked_hash());
                if let Some(row) = have.get(&slot) {
                    out.push(Row {
                        label: s.label.clone(),
                        right: q.is_right(&row.answer),
                        ..row.clone()
                    });
                    continue;
                }
                let doing = format!("{} · {}", q.id, s.label);
                progress(Progress {
                    done: out.len(),
                    total,
                    doing: &doing,
                });
                let options = AskOptions {
                    mode: s.mode,
                    whole_mode: s.whole_mode,
                    generate: GenerateOptions {
                        score: gold.clone(),
                        ..plan.options.generate.clone()
                    },
                    ..plan.options.clone()
                };
                let a = ask(&mut ws, q, &options, cancel)?;
                let scored = &a.generated.scored;
                let gold_nll = (!scored.is_empty() && scored.len() == gold.len())
                    .then(|| -scored.iter().sum::<f64>() / scored.len() as f64);
                let page_rank = a
                    .sources
                    .iter()
                    .position(|src| src.chunk.path == q.file)
                    .map(|i| i + 1);
                let row = Row {
                    id: q.id.clone(),
                    page: q.page(),
                    label: s.label.clone(),
                    // A doubted answer's mode is sequential's; the row keeps
                    // the setting's, which asked first.
                    mode: if a.doubted { s.mode } else { a.mode }.to_string(),
                    key: slot.0.clone(),
                    right: q.is_right(&a.generated.text),
                    answer: a.generated.text,
                    page_retrieved: page_rank.is_some(),
                    page_rank,
                    ttft_ms: a.ttft.as_secs_f64() * 1e3,
                    prompt_tokens: a.prompt_tokens,
                    states_encoded: a.states.encoded + a.states.rebuilt,
                    logprobs: a.generated.logprobs,
                    doubted: a.doubted,
                    gold_nll,
                    code: super::code_version().to_string(),
                };
                let line = serde_json::json!({"asked": slot.1, "row": row});
                writeln!(file, "{line}")
                    .and_then(|_| file.flush())
                    .map_err(|error| DocsError::Io {
                        path: plan.results.to_path_buf(),
                        error,
                    })?;
                have.insert(slot, row.clone());
                out.push(row);
            }
        }
    }
    progress(Progress {
        done: out.len(),
        total,
        doing: "done",
    });
    Ok(out)
}

/// Where retrieval put one question's page.
#[derive(Clone, Debug, Serialize)]
pub struct Retrieved {
    pub id: String,
    pub page: String,
    pub half: Half,
    /// Rank of the first retrieved chunk from the question's page.
    pub page_rank: Option<usize>,
}

/// Retrieval alone, as an answer retrieves (`plan.options`' top-k and
/// retrieval, no conversation): each folder indexed to text and vectors,
/// then every question's ranking, no answer and no state encoded. Splits
/// a setting's misses into the page never read and the page misread.
pub fn retrieval(
    engine: &Engine,
    folder: &FolderOptions,
    store: &dyn Fn() -> Result<KvStore, DocsError>,
    plan: &Plan<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Retrieved>, DocsError> {
    let total = plan.questions.len();
    let mut out = Vec::new();
    for (name, questions) in by_folder(plan.questions) {
        let folder_err = DocsError::Folder;
        let dir = plan.roots.folder(questions[0]);
        let mut ws = Workspace::open(engine, &dir, folder, store()?).map_err(folder_err)?;
        index_shown(&mut ws, &name, (out.len(), total), cancel, progress)?;
        for q in questions {
            if cancel.load(Ordering::Relaxed) {
                return Err(DocsError::Cancelled);
            }
            let hits = ws
                .index
                .select(
                    &mut ws.embedder,
                    &q.question,
                    None,
                    plan.options.top_k,
                    &[],
                    plan.options.retrieval,
                )
                .map_err(|e| DocsError::Folder(e.into()))?;
            out.push(Retrieved {
                id: q.id.clone(),
                page: q.page(),
                half: q.half(),
                page_rank: hits
                    .iter()
                    .position(|(_, c)| c.path == q.file)
                    .map(|i| i + 1),
            });
            progress(Progress {
                done: out.len(),
                total,
                doing: &q.id,
            });
        }
    }
    Ok(out)
}

fn ask(
    ws: &mut Workspace<'_>,
    q: &Question,
    options: &AskOptions,
    cancel: &AtomicBool,
) -> Result<crate::answer::Answer, DocsError> {
    let a = ws
        .ask(&q.question, &[], options, &mut |_| {
            !cancel.load(Ordering::Relaxed)
        })
        .map_err(|error| DocsError::Ask {
            id: q.id.clone(),
            error,
        })?;
    if cancel.load(Ordering::Relaxed) {
        return Err(DocsError::Cancelled);
    }
    Ok(a)
}

/// The questions of each folder, folders in name order (every group has
/// at least one question).
fn by_folder(questions: &[Question]) -> BTreeMap<String, Vec<&Question>> {
    let mut out: BTreeMap<String, Vec<&Question>> = BTreeMap::new();
    for q in questions {
        out.entry(q.folder_name()).or_default().push(q);
    }
    out
}

/// [`index`] with its stages shown as the run's progress, which stays at
/// `done` of `total` while the folder is indexed.
fn index_shown(
    ws: &mut Workspace<'_>,
    name: &str,
    (done, total): (usize, usize),
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(), DocsError> {
    index(ws, cancel, &mut |stage| {
        progress(Progress {
            done,
            total,
            doing: &format!("indexing {name}: {stage}"),
        })
    })
    .map_err(DocsError::Folder)
}

/// Text and vectors, as `ape-chat index` leaves a folder before states:
/// what hybrid retrieval needs. `progress` hears how far each stage is
/// ("embedding chunks 48/800"), as it opens and after every unit.
fn index(
    ws: &mut Workspace<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<(), WorkspaceError> {
    ws.refresh_text(cancel, &mut |p| {
        if let IndexProgress::Stage { done, total, .. } = p {
            progress(&format!("reading files {done}/{total}"))
        }
    })?;
    let vectors = ws.backlog().vectors.len();
    if vectors > 0 {
        progress(&format!("embedding chunks 0/{vectors}"));
    }
    while let Some(step) = ws.step(false)? {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        match step {
            Step::Yielded => std::thread::sleep(Duration::from_millis(50)),
            Step::Vectors { left, .. } => progress(&format!(
                "embedding chunks {}/{vectors}",
                vectors.saturating_sub(left)
            )),
            _ => {}
        }
    }
    Ok(())
}

/// Rows already made, by (key, question asked); a torn last line from a
/// killed run is skipped.
fn read_rows(path: &Path) -> Result<BTreeMap<(String, String), Row>, DocsError> {
    #[derive(Deserialize)]
    struct Line {
        asked: String,
        row: Row,
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(error) => {
            return Err(DocsError::Io {
                path: path.to_path_buf(),
                error,
            })
        }
    };
    Ok(std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Line>(&l).ok())
        .map(|l| ((l.row.key.clone(), l.asked), l.row))
        .collect())
}

/// One setting over the questions answered.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub label: String,
    pub mode: String,
    pub questions: usize,
    pub right: usize,
    /// Share answered right, with its interval (pages resampled).
    pub accuracy: Estimate,
    /// Its share right minus the baseline's (the first setting), paired by
    /// question, pages resampled.
    pub against_baseline: Estimate,
    /// Questions the baseline answered right and this setting did not, and
    /// the other way round.
    pub lost: usize,
    pub gained: usize,
    pub median_ttft_ms: f64,
    /// The baseline's median time to first token over this one's.
    pub speedup: f64,
    /// Share of questions whose page was among the sources.
    pub page_retrieved: f64,
    /// Answers begun again with sequential prefill by the doubt check.
    pub doubted: usize,
    /// Wrong answers whose page was never among the sources (retrieval's
    /// misses), and those whose page was (the reader's).
    pub missed_retrieval: usize,
    pub missed_reading: usize,
    /// The reference answer's likelihood per token, `exp(−NLL)`, averaged,
    /// over the baseline's: ratio of means, pages resampled, on the
    /// questions both measured.
    pub likelihood: Estimate,
}

/// Every setting's summary, paired against the first (`rows` as [`run`]
/// returns them: question by question, settings in order).
pub fn summarize(rows: &[Row], settings: &[Setting]) -> Vec<Summary> {
    let of = |label: &str| -> Vec<&Row> { rows.iter().filter(|r| r.label == label).collect() };
    let Some(base) = settings.first().map(|s| of(&s.label)) else {
        return Vec::new();
    };
    let pages: Vec<&str> = base.iter().map(|r| r.page.as_str()).collect();
    let clusters = Clusters::of(&pages);
    let score =
        |rs: &[&Row]| -> Vec<f64> { rs.iter().map(|r| f64::from(u8::from(r.right))).collect() };
    let b = score(&base);
    let base_ttft = median(base.iter().map(|r| r.ttft_ms).collect());
    settings
        .iter()
        .map(|s| {
            let mine = of(&s.label);
            let m = score(&mine);
            let n = mine.len();
            let ttft = median(mine.iter().map(|r| r.ttft_ms).collect());
            let paired = n == b.len();
            Summary {
                label: s.label.clone(),
                mode: mine
                    .first()
                    .map(|r| r.mode.clone())
                    .unwrap_or_else(|| s.mode.to_string()),
                questions: n,
                right: mine.iter().filter(|r| r.right).count(),
                accuracy: if paired {
                    bootstrap(&clusters, |ix| {
                        ix.iter().map(|&i| m[i]).sum::<f64>() / ix.len() as f64
                    })
                } else {
                    Estimate::exact(f64::NAN)
                },
                against_baseline: if paired {
                    paired_difference(&m, &b, &clusters)
                } else {
                    Estimate::exact(f64::NAN)
                },
                lost: (0..n.min(b.len())).filter(|&i| b[i] > m[i]).count(),
                gained: (0..n.min(b.len())).filter(|&i| b[i] < m[i]).count(),
                median_ttft_ms: ttft,
                speedup: base_ttft / ttft,
                page_retrieved: mine.iter().filter(|r| r.page_retrieved).count() as f64
                    / n.max(1) as f64,
                doubted: mine.iter().filter(|r| r.doubted).count(),
                missed_retrieval: mine
                    .iter()
                    .filter(|r| !r.right && !r.page_retrieved)
                    .count(),
                missed_reading: mine.iter().filter(|r| !r.right && r.page_retrieved).count(),
                likelihood: if paired {
                    likelihood_retention(&mine, &base)
                } else {
                    Estimate::exact(f64::NAN)
                },
            }
        })
        .collect()
}

/// [`Summary::likelihood`]: `mine` against `base`, row for row, on the
/// questions both measured, pages resampled.
fn likelihood_retention(mine: &[&Row], base: &[&Row]) -> Estimate {
    let both: Vec<(f64, f64, &str)> = mine
        .iter()
        .zip(base)
        .filter_map(|(m, b)| Some(((-m.gold_nll?).exp(), (-b.gold_nll?).exp(), b.page.as_str())))
        .collect();
    if both.is_empty() {
        return Estimate::exact(f64::NAN);
    }
    let pages: Vec<&str> = both.iter().map(|t| t.2).collect();
    let (a, b): (Vec<f64>, Vec<f64>) = both.iter().map(|t| (t.0, t.1)).unzip();
    ratio_of_means(&a, &b, &Clusters::of(&pages))
}

/// Draws `summary` (as [`summarize`] gives it) to an SVG at `path`: each
/// setting's share answered right, and its reference-answer likelihood
/// retention, against its time-to-first-token speedup over the baseline
/// (log scale), with their intervals, labelled.
/// The baseline's accuracy is a dashed line: a setting on or above it at a
/// large speedup is what the default should be.
pub fn chart(summary: &[Summary], subtitle: &str, path: &Path) -> Result<(), DocsError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Debug| DocsError::Io {
        path: path.to_path_buf(),
        error: std::io::Error::other(format!("drawing: {e:?}")),
    };
    let points: Vec<&Summary> = summary
        .iter()
        .filter(|s| s.speedup.is_finite() && s.accuracy.value.is_finite())
        .collect();
    let x_max = points.iter().map(|s| s.speedup).fold(10.0, f64::max) * 2.0;
    // Likelihood retention shares the axis: both are fractions of a whole.
    let kept: Vec<&Summary> = points
        .iter()
        .copied()
        .filter(|s| s.likelihood.value.is_finite())
        .collect();
    let lows = points
        .iter()
        .map(|s| s.accuracy.lo)
        .chain(kept.iter().map(|s| s.likelihood.lo));
    let highs = points
        .iter()
        .map(|s| s.accuracy.hi)
        .chain(kept.iter().map(|s| s.likelihood.hi));
    let y_lo = lows.fold(1.0, f64::min) - 0.05;
    let y_hi = highs.fold(0.0, f64::max) + 0.05;
    let root = SVGBackend::new(path, (960, 560)).into_drawing_area();
    let body = crate::svg::titled(
        &root,
        "Right on real documents: questions answered right vs time to first token",
        subtitle,
    )
    .map_err(|e| err(&e))?;
    let mut c = ChartBuilder::on(&body)
        .margin(18)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((0.7..x_max).log_scale(), y_lo.max(0.0)..y_hi.min(1.05))
        .map_err(|e| err(&e))?;
    let base = summary.first().map(|s| s.label.as_str()).unwrap_or("");
    c.configure_mesh()
        .x_desc(format!(
            "time-to-first-token speedup over {base}, states cached (log scale)"
        ))
        .y_desc(
            "share right ● / reference-answer likelihood retention ◆ (95 % CI, pages resampled)",
        )
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| format!("{v:.0}×"))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(|e| err(&e))?;
    if let Some(b) = summary.first() {
        c.draw_series(DashedLineSeries::new(
            vec![(0.7, b.accuracy.value), (x_max, b.accuracy.value)],
            6,
            4,
            RGBColor(120, 120, 120).stroke_width(1),
        ))
        .map_err(|e| err(&e))?;
    }
    let colour = RGBColor(90, 120, 200);
    for s in &points {
        c.draw_series(std::iter::once(PathElement::new(
            vec![(s.speedup, s.accuracy.lo), (s.speedup, s.accuracy.hi)],
            colour.stroke_width(1),
        )))
        .map_err(|e| err(&e))?;
        c.draw_series(std::iter::once(Circle::new(
            (s.speedup, s.accuracy.value),
            5,
            colour.filled(),
        )))
        .map_err(|e| err(&e))?;
        let label = format!("{} {}/{}", s.label, s.right, s.questions);
        c.draw_series(std::iter::once(Text::new(
            label,
            (s.speedup, s.accuracy.value),
            ("sans-serif", 13).into_font(),
        )))
        .map_err(|e| err(&e))?;
    }
    let diamond = RGBColor(200, 110, 40);
    for s in &kept {
        let (x, l) = (s.speedup, s.likelihood);
        c.draw_series(std::iter::once(PathElement::new(
            vec![(x, l.lo), (x, l.hi)],
            diamond.stroke_width(1),
        )))
        .map_err(|e| err(&e))?;
        c.draw_series(std::iter::once(
            EmptyElement::at((x, l.value))
                + Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], diamond.filled()),
        ))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, file: &str, answer: &str, evidence: &str) -> Question {
        Question {
            id: id.into(),
            docs: Docs::Rust,
            folder: "book".into(),
            file: file.into(),
            question: "?".into(),
            answer: answer.into(),
            evidence: evidence.into(),
            gold: None,
        }
    }

    #[test]
    fn a_python_folder_is_its_own_page_and_lives_under_its_own_root() {
        let rust = q("r", "index.html", "x", "x");
        let mut python = rust.clone();
        python.docs = Docs::Python3;
        let roots = Roots {
            rust: "/r".into(),
            python3: "/p".into(),
        };
        assert_eq!(roots.folder(&rust), Path::new("/r/book"));
        assert_eq!(roots.folder(&python), Path::new("/p/book"));
        assert_ne!(rust.page(), python.page());
        assert_ne!(rust.asked_hash(), python.asked_hash());
        assert_eq!(by_folder(&[rust.clone(), python, rust]).len(), 2);
        // A Rust question's page, half and row identity are what they were
        // before trees had names, so its rows are reused.
        let line = r#"{"id":"r","folder":"book","file":"index.html","question":"?","answer":"x","evidence":"x"}"#;
        let read: Question = serde_json::from_str(line).unwrap();
        assert_eq!(read.page(), "book/index.html");
        assert_eq!(serde_json::to_string(&read).unwrap(), line);
    }

    #[test]
    fn the_reference_answer_is_the_evidence_the_pattern_matches_unless_written() {
        let mut q = q(
            "a",
            "p.html",
            r"\b16\b|sixteen",
            "incremental = false codegen-units = 16",
        );
        assert_eq!(q.gold(), "16");
        q.gold = Some("16 codegen units".into());
        assert_eq!(q.gold(), "16 codegen units");
    }

    #[test]
    fn a_question_is_right_by_its_pattern_whatever_the_case() {
        let q = q(
            "a",
            "p.html",
            r"target/release\b",
            "It lives in target/release.",
        );
        assert!(q.is_right("In TARGET/release, after the build."));
        assert!(!q.is_right("In target/debug."));
        assert!(!q.is_right("target/releases"));
    }

    #[test]
    fn questions_of_one_page_share_a_half_and_both_halves_are_used() {
        let pages: Vec<Question> = (0..64)
            .map(|i| q(&i.to_string(), &format!("p{}.html", i / 2), "x", "x"))
            .collect();
        for pair in pages.chunks(2) {
            assert_eq!(pair[0].half(), pair[1].half());
        }
        let tune = pages.iter().filter(|q| q.half() == Half::Tune).count();
        assert!(tune > 8 && tune < 56, "{tune} of 64 in the tune half");
    }

    #[test]
    fn loading_refuses_a_pattern_its_evidence_does_not_match_and_a_repeated_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.jsonl");
        let line = |id: &str, answer: &str| {
            serde_json::to_string(&q(id, "p.html", answer, "Cargo.lock pins versions.")).unwrap()
        };
        std::fs::write(
            &path,
            format!("{}\n\n{}\n", line("a", "cargo\\.lock"), line("b", "lock")),
        )
        .unwrap();
        assert_eq!(load(&path).unwrap().len(), 2);
        std::fs::write(
            &path,
            format!("{}\n{}\n", line("a", "lock"), line("b", "manifest")),
        )
        .unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("does not match"), "{e}");
        std::fs::write(
            &path,
            format!("{}\n{}\n", line("a", "lock"), line("a", "lock")),
        )
        .unwrap();
        assert!(load(&path)
            .unwrap_err()
            .to_string()
            .contains("second question"));
        std::fs::write(&path, format!("{}\n", line("a", "(unclosed"))).unwrap();
        assert!(load(&path)
            .unwrap_err()
            .to_string()
            .contains("answer pattern"));
    }

    fn row(id: &str, page: &str, label: &str, right: bool, ttft_ms: f64) -> Row {
        Row {
            id: id.into(),
            page: page.into(),
            label: label.into(),
            mode: label.into(),
            key: String::new(),
            answer: String::new(),
            right,
            page_retrieved: true,
            page_rank: Some(1),
            ttft_ms,
            prompt_tokens: 0,
            states_encoded: 0,
            logprobs: Vec::new(),
            doubted: false,
            gold_nll: Some(0.5),
            code: String::new(),
        }
    }

    #[test]
    fn the_summary_pairs_every_setting_against_the_first() {
        let settings: Vec<Setting> = ["exact", "fast"]
            .iter()
            .map(|l| Setting {
                label: l.to_string(),
                mode: Mode::Sequential,
                whole_mode: None,
            })
            .collect();
        let mut rows = Vec::new();
        for i in 0..4 {
            let page = format!("p{}", i / 2);
            rows.push(row(&i.to_string(), &page, "exact", true, 1000.0));
            rows.push(row(&i.to_string(), &page, "fast", i != 0, 100.0 + i as f64));
        }
        // The first fast answer was doubted: counted, its row still fast's.
        rows[1].doubted = true;
        // Its page was not retrieved: a retrieval miss, not a reading one.
        rows[1].page_retrieved = false;
        // Fast is less sure of the reference on one question, and one of
        // exact's has no likelihood: that question is left out of the ratio.
        rows[3].gold_nll = Some(1.5);
        rows[4].gold_nll = None;
        let s = summarize(&rows, &settings);
        assert_eq!((s[1].missed_retrieval, s[1].missed_reading), (1, 0));
        assert_eq!((s[0].missed_retrieval, s[0].missed_reading), (0, 0));
        let kept =
            (3.0 * (-0.5f64).exp() - (-0.5f64).exp() + (-1.5f64).exp()) / (3.0 * (-0.5f64).exp());
        assert!(
            (s[1].likelihood.value - kept).abs() < 1e-12,
            "{:?}",
            s[1].likelihood
        );
        assert_eq!(s[0].likelihood.value, 1.0);
        assert_eq!((s[0].doubted, s[1].doubted), (0, 1));
        assert_eq!(s[1].mode, "fast", "the setting's mode");
        assert_eq!((s[0].right, s[1].right), (4, 3));
        assert_eq!(s[0].against_baseline.value, 0.0);
        assert_eq!(s[1].against_baseline.value, -0.25);
        assert_eq!((s[1].lost, s[1].gained), (1, 0));
        assert!((s[1].speedup - 1000.0 / 101.5).abs() < 1e-9);
        assert!(s[1].against_baseline.lo <= -0.25 && s[1].against_baseline.hi >= -0.25);
    }
}

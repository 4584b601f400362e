//! A user's first minutes on a folder ape-chat has never seen
//! (`ape-chat bench first-answer`): the folder is copied to a scratch
//! place (fresh index, fresh state cache) and, from a cold start, we time
//! loading the model, the text stage (BM25 ready), the first token of a
//! first question (its chunk states encoded on demand), the same question
//! again (states cached), the same question typed while background work
//! encodes a state (against it asked idle), and a second question asked
//! while background encoding has work left.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{BenchError, ScratchDir};
use crate::answer::AskOptions;
use crate::engine::{Engine, EngineOptions};
use crate::kvstore::KvStore;
use crate::workspace::{FolderOptions, Step, Workspace, WorkspaceError};

/// What to run.
#[derive(Clone, Debug)]
pub struct FirstAnswerOptions {
    pub folder: PathBuf,
    pub model: PathBuf,
    pub engine: EngineOptions,
    pub folder_options: FolderOptions,
    pub ask: AskOptions,
    pub questions: [String; 2],
    /// Background work done between the first and the second question.
    pub background: Duration,
}

/// One answer's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AnswerFigures {
    /// From the start of the run (model load included).
    pub first_token_from_launch_ms: f64,
    /// From the question (retrieval, states, prefill, first token).
    pub first_token_ms: f64,
    pub states_encoded: usize,
    pub decode_tokens_per_s: f64,
}

/// The figures.
#[derive(Clone, Debug, Serialize)]
pub struct FirstAnswerReport {
    pub files: usize,
    pub chunks: usize,
    pub tokens: usize,
    pub model_load_ms: f64,
    /// From launch until BM25 was committed: answers possible.
    pub text_ready_ms: f64,
    pub first: AnswerFigures,
    /// The same question again, its states now cached.
    pub again: AnswerFigures,
    /// Background units (vector batches, chunk states) done before the
    /// second question, and how many states were still to do then.
    pub background_units: usize,
    pub states_left: usize,
    /// The first question once more, idle and then typed (announced, as
    /// the TUI does) while background work encodes a state.
    pub during_encoding: DuringEncoding,
    /// A second question asked with background work pending.
    pub second: AnswerFigures,
}

/// A question that arrived while background work computed, and the same
/// question asked just before on an idle machine. Both find the same
/// chunks, their states cached (retrieval can differ from the first
/// answer's once vectors exist, so a first ask here caches them).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DuringEncoding {
    pub idle: AnswerFigures,
    /// From its arrival (`first_token_ms` counts from then).
    pub answer: AnswerFigures,
    /// From its arrival until the background unit in flight gave way.
    pub waited_ms: f64,
}

/// Asks `question` idle (states cached), then the way the TUI does when
/// it is typed while background work runs: units go on until the question
/// arrives (1 s later, inside a unit), its announcement stops the unit in
/// flight, and it is answered.
fn during_encoding<'e>(
    ws: &mut Workspace<'e>,
    question: &str,
    ask: &dyn Fn(&mut Workspace<'e>, &str) -> Result<AnswerFigures, BenchError>,
) -> Result<DuringEncoding, BenchError> {
    let fail = |e: WorkspaceError| BenchError::Setup(e.to_string());
    ask(ws, question)?; // its states cached for today's retrieval
    let idle = ask(ws, question)?;
    let budget = ws.budget().clone();
    let typist = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        (Instant::now(), budget.announce())
    });
    while !typist.is_finished() {
        if let None | Some(Step::Yielded) = ws.step(true).map_err(fail)? {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let (arrived, announced) = typist
        .join()
        .map_err(|_| BenchError::Setup("the typing thread panicked".into()))?;
    let announced = announced?;
    let waited_ms = ms(arrived.elapsed());
    let mut a = ask(ws, question)?;
    drop(announced);
    // `ask` timed from its own start; count the wait in.
    a.first_token_ms += waited_ms;
    Ok(DuringEncoding {
        idle,
        answer: a,
        waited_ms,
    })
}

/// Runs the scenario.
pub fn first_answer(
    o: &FirstAnswerOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<FirstAnswerReport, BenchError> {
    let scratch = ScratchDir::new("first-answer")?;
    let folder = scratch.0.join("folder");
    copy_tree(&o.folder, &folder)?;
    let fail = |e: WorkspaceError| BenchError::Setup(e.to_string());
    let launch = Instant::now();
    let engine = Engine::load(&o.model, o.engine.clone())?;
    let model_load_ms = ms(launch.elapsed());
    progress("reading files…");
    let mut ws = Workspace::open_in(
        &engine,
        &folder,
        Some(scratch.0.join("index")),
        &o.folder_options,
        KvStore::new(scratch.0.join("kv")),
    )
    .map_err(fail)?;
    let never = AtomicBool::new(false);
    let r = ws.refresh_text(&never, &mut |_| {}).map_err(fail)?;
    let text_ready_ms = ms(launch.elapsed());
    let ask = |ws: &mut Workspace<'_>, q: &str| -> Result<AnswerFigures, BenchError> {
        let asked = Instant::now();
        let mut first = None;
        let a = ws
            .ask(q, &o.ask, &mut |_| {
                first.get_or_insert_with(Instant::now);
                true
            })
            .map_err(fail)?;
        let first = first.unwrap_or_else(Instant::now);
        Ok(AnswerFigures {
            first_token_from_launch_ms: ms(first - launch),
            first_token_ms: ms(first - asked),
            states_encoded: a.states.computed(),
            decode_tokens_per_s: a.generated.decode_tokens_per_s(),
        })
    };
    progress("first question…");
    let first = ask(&mut ws, &o.questions[0])?;
    let again = ask(&mut ws, &o.questions[0])?;
    progress("background indexing…");
    let t = Instant::now();
    let mut units = 0;
    let mut states_done = 0;
    // Past the set time, go on until a state is being encoded: the
    // question below is to arrive in the middle of one.
    while t.elapsed() < o.background || states_done == 0 {
        match ws.step(true).map_err(fail)? {
            None => break,
            Some(Step::Yielded) => std::thread::sleep(Duration::from_millis(50)),
            Some(step) => {
                units += 1;
                states_done += usize::from(matches!(step, Step::State { .. }));
            }
        }
    }
    let states_left = ws.backlog().states.len();
    progress("the first question again, typed while a state is encoded…");
    let during = during_encoding(&mut ws, &o.questions[0], &ask)?;
    progress("second question…");
    let second = ask(&mut ws, &o.questions[1])?;
    Ok(FirstAnswerReport {
        files: r.files_indexed,
        chunks: r.chunks,
        tokens: r.tokens,
        model_load_ms,
        text_ready_ms,
        first,
        again,
        background_units: units,
        states_left,
        during_encoding: during,
        second,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Copies the files under `from` to `to` (directories recreated, links
/// and special files left out).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

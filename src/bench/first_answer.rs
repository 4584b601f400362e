//! A user's first minutes on a folder ape-chat has never seen
//! (`ape-chat bench first-answer`): the folder is copied to a scratch
//! place (fresh index, fresh state cache) and, from a cold start, we time
//! loading the model, the text stage (BM25 ready), the first token of a
//! first question (its chunk states encoded on demand), the same question
//! again (states cached), the same question typed while background work
//! encodes a state (against it asked idle), and a second question asked
//! while background encoding has work left.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{BenchError, ScratchDir};
use crate::answer::AskOptions;
use crate::compute::Budget;
use crate::engine::{Engine, EngineOptions};
use crate::index::{IndexProgress, Stage};
use crate::kvstore::KvStore;
use crate::service::{
    AnswerEvent, FolderEvent, FolderSpec, Handle, Question, Service, ServiceOptions, Until,
};
use crate::workspace::FolderOptions;

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
    /// From its arrival until the service took it up (the background
    /// unit in flight gave way).
    pub waited_ms: f64,
}

/// The service under test and what it reported so far.
struct Client {
    handle: Handle,
    events: Receiver<FolderEvent>,
    launch: Instant,
    /// Background units done, and states left after the latest one.
    units: usize,
    states_done: usize,
    states_left: Option<usize>,
}

impl Client {
    /// Takes the folder events that arrived, or waits up to `wait` for one.
    fn pump(&mut self, wait: Duration) -> Result<Option<FolderEvent>, BenchError> {
        let e = match self.events.recv_timeout(wait) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => return Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(BenchError::Setup("the folder service stopped".into()))
            }
        };
        match &e {
            FolderEvent::Progress(IndexProgress::Stage {
                stage: Stage::Vectors,
                ..
            }) => self.units += 1,
            FolderEvent::Progress(IndexProgress::Stage {
                stage: Stage::States,
                done,
                total,
            }) => {
                self.units += 1;
                self.states_done += 1;
                self.states_left = Some(total - done);
            }
            FolderEvent::Indexed { report, .. } => self.states_left = Some(report.states_deferred),
            FolderEvent::Error {
                message,
                fatal: true,
            } => return Err(BenchError::Setup(message.clone())),
            _ => {}
        }
        Ok(Some(e))
    }

    /// Asks `question` and times it from now (the queue and the unit in
    /// flight giving way included); also reports how long it waited.
    fn ask(&mut self, question: &str) -> Result<(AnswerFigures, Duration), BenchError> {
        let asked = Instant::now();
        let ticket = self
            .handle
            .ask(Question {
                text: question.to_string(),
                ..Question::default()
            })
            .map_err(|e| BenchError::Setup(e.to_string()))?;
        let (mut first, mut waited) = (None, Duration::ZERO);
        loop {
            while self.pump(Duration::ZERO)?.is_some() {}
            let event = match ticket.events.recv_timeout(Duration::from_millis(50)) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(BenchError::Setup("the folder service stopped".into()))
                }
            };
            match event {
                AnswerEvent::Started { waited: w } => waited = w,
                AnswerEvent::Token { text, .. } => {
                    if !text.is_empty() {
                        first.get_or_insert_with(Instant::now);
                    }
                }
                AnswerEvent::Answered(a) => {
                    let first = first.unwrap_or_else(Instant::now);
                    let a = &a.answer;
                    let figures = AnswerFigures {
                        first_token_from_launch_ms: ms(first - self.launch),
                        first_token_ms: ms(first - asked),
                        states_encoded: a.states.computed(),
                        decode_tokens_per_s: a.generated.decode_tokens_per_s(),
                    };
                    return Ok((figures, waited));
                }
                AnswerEvent::Failed(e) => return Err(BenchError::Setup(e.message)),
            }
        }
    }
}

/// Runs the scenario through the folder service, as the TUI uses it.
pub fn first_answer(
    o: &FirstAnswerOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<FirstAnswerReport, BenchError> {
    let scratch = ScratchDir::new("first-answer")?;
    let folder = scratch.0.join("folder");
    copy_tree(&o.folder, &folder)?;
    let launch = Instant::now();
    let service = Service::new(
        ServiceOptions {
            ask: o.ask.clone(),
            with_states: true,
            watch: None,
            until: Until::Shutdown,
            preload: false,
            queue: 4,
        },
        Budget::default(),
    );
    let handle = service.handle();
    let (tx, events) = mpsc::channel();
    let (model, engine) = (o.model.clone(), o.engine.clone());
    let spec = FolderSpec {
        folder,
        options: o.folder_options.clone(),
        store: KvStore::new(scratch.0.join("kv")),
        index_dir: Some(scratch.0.join("index")),
    };
    let thread = service.spawn(move || Engine::load(&model, engine), spec, tx)?;
    let mut c = Client {
        handle,
        events,
        launch,
        units: 0,
        states_done: 0,
        states_left: None,
    };
    let result = scenario(o, &mut c, progress);
    c.handle.shutdown();
    drop(c);
    let _ = thread.join();
    result
}

fn scenario(
    o: &FirstAnswerOptions,
    c: &mut Client,
    progress: &mut dyn FnMut(&str),
) -> Result<FirstAnswerReport, BenchError> {
    progress("loading the model…");
    let mut model_load_ms = 0.0;
    let text = loop {
        match c.pump(Duration::from_secs(3600))? {
            Some(FolderEvent::Loaded { ms }) => {
                model_load_ms = ms;
                progress("reading files…");
            }
            Some(FolderEvent::TextReady { report, .. }) => break report,
            _ => {}
        }
    };
    let text_ready_ms = ms(c.launch.elapsed());
    progress("first question…");
    let (first, _) = c.ask(&o.questions[0])?;
    let (again, _) = c.ask(&o.questions[0])?;
    progress("background indexing…");
    let (units_before, states_before) = (c.units, c.states_done);
    let t = Instant::now();
    // Past the set time, go on until a state has been encoded: the
    // question below is to arrive while the next one is.
    while t.elapsed() < o.background || c.states_done == states_before {
        if let Some(FolderEvent::Indexed { .. }) = c.pump(Duration::from_millis(50))? {
            break;
        }
    }
    let background_units = c.units - units_before;
    let states_left = c.states_left.unwrap_or(0);
    progress("the first question again, typed while a state is encoded…");
    // Asked idle first (its states cached for today's retrieval, which
    // can differ from the first answer's once vectors exist).
    c.ask(&o.questions[0])?;
    let (idle, _) = c.ask(&o.questions[0])?;
    // The service went back to background work; a second later, the
    // question arrives in the middle of a unit.
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(1) {
        c.pump(Duration::from_millis(20))?;
    }
    let (answer, waited) = c.ask(&o.questions[0])?;
    progress("second question…");
    let (second, _) = c.ask(&o.questions[1])?;
    Ok(FirstAnswerReport {
        files: text.files_indexed,
        chunks: text.chunks,
        tokens: text.tokens,
        model_load_ms,
        text_ready_ms,
        first,
        again,
        background_units,
        states_left,
        during_encoding: DuringEncoding {
            idle,
            answer,
            waited_ms: ms(waited),
        },
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

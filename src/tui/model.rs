//! The TUI's state and its one `update` function: every key press, streamed
//! token and background report is a [`Msg`]; `update` changes the [`Model`]
//! and returns the [`Effect`]s the shell must carry out. Pure, so it is
//! tested without a terminal.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::{Deserialize, Serialize};

use crate::answer::Exchange;

/// Everything that can happen.
#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Resize,
    /// Transient activity (loading, indexing progress, watcher).
    Activity(String),
    /// The index is ready or was updated.
    Index {
        files: usize,
        chunks: usize,
    },
    /// The files the last text pass could not read: path and reason.
    Skipped(Vec<(String, String)>),
    /// A piece of the answer being generated.
    Token(String),
    /// The answer is complete.
    Answered {
        sources: Vec<SourceView>,
        /// How it was made, for the status bar (`balanced` re-reads the
        /// whole chunk on a GPU and over `@path` files, a window otherwise).
        mode: String,
        ttft_ms: f64,
        tokens_per_s: f64,
    },
    /// The question failed.
    Failed(String),
}

/// What the shell must do after an update.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Ask `question` after the earlier turns of its conversation, reading
    /// `files` (the question's `@path`s) whole.
    Ask {
        question: String,
        history: Vec<Exchange>,
        files: Vec<String>,
    },
    Cancel,
    Save,
    Quit,
    /// Open this source at its location (editor or desktop opener).
    Open(SourceView),
    /// Put this text on the clipboard (OSC 52: works over ssh).
    Copy(String),
}

/// A source of an answer as the sources pane shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceView {
    pub path: String,
    pub lines: (usize, usize),
    pub heading: String,
    pub preview: String,
    /// Its page, slide, sheet rows… where the format has units.
    #[serde(default)]
    pub place: Option<String>,
    /// Whether `lines` are the file's own lines (plain text), so an editor
    /// can open it there; other formats go to the desktop opener.
    #[serde(default)]
    pub editable: bool,
}

/// One question and its answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub question: String,
    pub answer: String,
    pub sources: Vec<SourceView>,
    #[serde(default)]
    pub error: Option<String>,
    /// The first question of a new conversation (Ctrl-N): earlier turns
    /// are not its history.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starts_conversation: bool,
    #[serde(skip)]
    pub streaming: bool,
}

/// What the status bar shows.
#[derive(Clone, Debug, Default)]
pub struct Status {
    pub model: String,
    /// How answers are made: the setting, as the last answer applied it
    /// (before one, as asked for).
    pub mode: String,
    pub files: usize,
    pub chunks: usize,
    pub activity: String,
    pub last_ttft_ms: Option<f64>,
    pub last_tokens_per_s: Option<f64>,
}

/// The whole UI state.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub turns: Vec<Turn>,
    pub input: String,
    /// Cursor position in `input`, in chars.
    pub cursor: usize,
    pub past_inputs: Vec<String>,
    recall: Option<usize>,
    /// Turn whose sources are shown; `None` follows the latest.
    pub selected: Option<usize>,
    /// The highlighted source of the shown turn (Tab moves it).
    pub source: usize,
    pub help: bool,
    pub busy: bool,
    /// The next question starts a new conversation.
    pub fresh: bool,
    /// Files the next question reads whole (Ctrl-F on a source; `@path` in
    /// the question adds its own).
    pub whole: Vec<String>,
    pub status: Status,
    /// Files the index could not read, and why (the help lists them).
    pub skipped: Vec<(String, String)>,
}

impl Model {
    /// A model with restored history.
    pub fn new(turns: Vec<Turn>, status: Status) -> Self {
        let past_inputs = turns.iter().map(|t| t.question.clone()).collect();
        Self {
            turns,
            past_inputs,
            status,
            ..Self::default()
        }
    }

    /// The conversation the next question follows: the answered turns
    /// since the last new-conversation mark, oldest first (failed and
    /// empty answers left out).
    pub fn conversation(&self) -> Vec<Exchange> {
        if self.fresh {
            return Vec::new();
        }
        let start = self
            .turns
            .iter()
            .rposition(|t| t.starts_conversation)
            .unwrap_or(0);
        self.turns[start..]
            .iter()
            .filter(|t| !t.streaming && t.error.is_none() && !t.answer.trim().is_empty())
            .map(|t| Exchange {
                question: t.question.clone(),
                answer: t.answer.clone(),
            })
            .collect()
    }

    /// The turn whose sources are shown.
    pub fn shown_turn(&self) -> Option<&Turn> {
        self.selected
            .and_then(|i| self.turns.get(i))
            .or_else(|| self.turns.last())
    }
}

/// Applies `msg` to `m`.
pub fn update(m: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(k) => key(m, k),
        Msg::Resize => vec![],
        Msg::Activity(a) => {
            m.status.activity = a;
            vec![]
        }
        Msg::Index { files, chunks } => {
            (m.status.files, m.status.chunks) = (files, chunks);
            vec![]
        }
        Msg::Skipped(files) => {
            m.skipped = files;
            vec![]
        }
        Msg::Token(t) => {
            if let Some(turn) = m.turns.last_mut().filter(|t| t.streaming) {
                turn.answer.push_str(&t);
            }
            vec![]
        }
        Msg::Answered {
            sources,
            mode,
            ttft_ms,
            tokens_per_s,
        } => {
            if let Some(turn) = m.turns.last_mut() {
                turn.sources = sources;
                turn.streaming = false;
            }
            m.busy = false;
            m.source = 0;
            m.status.mode = mode;
            m.status.last_ttft_ms = Some(ttft_ms);
            m.status.last_tokens_per_s = Some(tokens_per_s);
            vec![Effect::Save]
        }
        Msg::Failed(e) => {
            if let Some(turn) = m.turns.last_mut() {
                turn.error = Some(e);
                turn.streaming = false;
            }
            m.busy = false;
            vec![Effect::Save]
        }
    }
}

fn key(m: &mut Model, k: KeyEvent) -> Vec<Effect> {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    if m.help {
        m.help = false; // any key closes the help
        return vec![];
    }
    match k.code {
        KeyCode::Char('c') if ctrl => vec![if m.busy { Effect::Cancel } else { Effect::Quit }],
        KeyCode::Char('d') if ctrl => vec![Effect::Quit],
        KeyCode::Char('n') if ctrl && !m.busy => {
            m.fresh = !m.turns.is_empty();
            m.selected = None;
            vec![]
        }
        KeyCode::Tab | KeyCode::BackTab => {
            let n = m.shown_turn().map_or(0, |t| t.sources.len());
            if n > 0 {
                m.source = if k.code == KeyCode::Tab {
                    (m.source + 1) % n
                } else {
                    (m.source + n - 1) % n
                };
            }
            vec![]
        }
        KeyCode::Char('o') if ctrl => m
            .shown_turn()
            .and_then(|t| t.sources.get(m.source))
            .map(|s| Effect::Open(s.clone()))
            .into_iter()
            .collect(),
        // The next question reads the highlighted source's file whole (a
        // second press takes it back).
        KeyCode::Char('f') if ctrl => {
            if let Some(s) = m.shown_turn().and_then(|t| t.sources.get(m.source)) {
                let path = s.path.clone();
                match m.whole.iter().position(|p| *p == path) {
                    Some(i) => drop(m.whole.remove(i)),
                    None => m.whole.push(path),
                }
            }
            vec![]
        }
        KeyCode::Char('y') if ctrl => m
            .shown_turn()
            .filter(|t| !t.streaming && !t.answer.is_empty())
            .map(|t| Effect::Copy(t.answer.clone()))
            .into_iter()
            .collect(),
        KeyCode::Esc if m.busy => vec![Effect::Cancel],
        KeyCode::Char('?') if m.input.is_empty() => {
            m.help = true;
            vec![]
        }
        KeyCode::Enter => submit(m),
        KeyCode::Char(c) if !ctrl => {
            let at = byte_at(&m.input, m.cursor);
            m.input.insert(at, c);
            m.cursor += 1;
            vec![]
        }
        KeyCode::Backspace if m.cursor > 0 => {
            m.cursor -= 1;
            let at = byte_at(&m.input, m.cursor);
            m.input.remove(at);
            vec![]
        }
        KeyCode::Delete if m.cursor < m.input.chars().count() => {
            let at = byte_at(&m.input, m.cursor);
            m.input.remove(at);
            vec![]
        }
        KeyCode::Left => {
            m.cursor = m.cursor.saturating_sub(1);
            vec![]
        }
        KeyCode::Right => {
            m.cursor = (m.cursor + 1).min(m.input.chars().count());
            vec![]
        }
        KeyCode::Home => {
            m.cursor = 0;
            vec![]
        }
        KeyCode::End => {
            m.cursor = m.input.chars().count();
            vec![]
        }
        KeyCode::Up => recall(m, -1),
        KeyCode::Down => recall(m, 1),
        KeyCode::PageUp | KeyCode::PageDown if !m.turns.is_empty() => {
            let last = m.turns.len() - 1;
            let cur = m.selected.unwrap_or(last);
            let next = if k.code == KeyCode::PageUp {
                cur.saturating_sub(1)
            } else {
                (cur + 1).min(last)
            };
            m.selected = (next != last).then_some(next);
            m.source = 0;
            vec![]
        }
        _ => vec![],
    }
}

/// The question without its `@path` words, and those paths: files the
/// question reads whole.
pub fn split_files(input: &str) -> (String, Vec<String>) {
    let mut files = Vec::new();
    let words: Vec<&str> = input
        .split_whitespace()
        .filter(|w| match w.strip_prefix('@') {
            Some(path) if !path.is_empty() => {
                files.push(path.to_string());
                false
            }
            _ => true,
        })
        .collect();
    (words.join(" "), files)
}

fn submit(m: &mut Model) -> Vec<Effect> {
    let q = m.input.trim().to_string();
    let (question, mut files) = split_files(&q);
    if m.busy || question.is_empty() {
        return vec![];
    }
    for f in std::mem::take(&mut m.whole) {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    let history = m.conversation();
    m.turns.push(Turn {
        question: q.clone(),
        starts_conversation: std::mem::take(&mut m.fresh),
        streaming: true,
        ..Turn::default()
    });
    m.past_inputs.push(q.clone());
    m.input.clear();
    m.cursor = 0;
    m.recall = None;
    m.selected = None;
    m.source = 0;
    m.busy = true;
    vec![Effect::Ask {
        question,
        history,
        files,
    }]
}

/// Walks through earlier questions like a shell history.
fn recall(m: &mut Model, step: isize) -> Vec<Effect> {
    if m.past_inputs.is_empty() {
        return vec![];
    }
    let n = m.past_inputs.len() as isize;
    let pos = m.recall.map_or(n, |i| i as isize) + step;
    if pos >= n {
        m.recall = None;
        m.input.clear();
    } else {
        let i = pos.max(0) as usize;
        m.recall = Some(i);
        m.input = m.past_inputs[i].clone();
    }
    m.cursor = m.input.chars().count();
    vec![]
}

fn byte_at(s: &str, char_idx: usize) -> usize {
    s.char_indices().nth(char_idx).map_or(s.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(m: &mut Model, code: KeyCode) -> Vec<Effect> {
        update(m, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
    }

    fn ctrl(m: &mut Model, c: char) -> Vec<Effect> {
        update(
            m,
            Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)),
        )
    }

    fn type_text(m: &mut Model, s: &str) {
        s.chars().for_each(|c| {
            press(m, KeyCode::Char(c));
        });
    }

    #[test]
    fn typing_editing_and_submitting() {
        let mut m = Model::default();
        type_text(&mut m, "helo?");
        press(&mut m, KeyCode::Left);
        press(&mut m, KeyCode::Left);
        press(&mut m, KeyCode::Char('l'));
        assert_eq!(m.input, "hello?");
        assert_eq!(
            press(&mut m, KeyCode::Enter),
            [Effect::Ask {
                question: "hello?".into(),
                history: Vec::new(),
                files: Vec::new(),
            }]
        );
        assert!(m.busy && m.input.is_empty() && m.turns[0].streaming);
        assert!(
            press(&mut m, KeyCode::Enter).is_empty(),
            "no second question while busy"
        );
        update(&mut m, Msg::Token("Hi".into()));
        update(&mut m, Msg::Token(" there".into()));
        let fx = update(
            &mut m,
            Msg::Answered {
                sources: vec![],
                mode: "balanced (whole re-read)".into(),
                ttft_ms: 12.0,
                tokens_per_s: 30.0,
            },
        );
        assert_eq!(fx, [Effect::Save]);
        assert_eq!(m.turns[0].answer, "Hi there");
        assert_eq!(
            m.status.mode, "balanced (whole re-read)",
            "the answer's own"
        );
        assert!(!m.busy && !m.turns[0].streaming);
    }

    /// Asks `q` and answers it with `a` (or fails it with `a` when
    /// `failed`).
    fn turn(m: &mut Model, q: &str, a: &str, failed: bool) -> Vec<Exchange> {
        type_text(m, q);
        let fx = press(m, KeyCode::Enter);
        if failed {
            update(m, Msg::Failed(a.into()));
        } else {
            update(m, Msg::Token(a.into()));
            update(
                m,
                Msg::Answered {
                    sources: vec![],
                    mode: String::new(),
                    ttft_ms: 1.0,
                    tokens_per_s: 1.0,
                },
            );
        }
        match fx.as_slice() {
            [Effect::Ask { history, .. }] => history.clone(),
            other => panic!("expected one question, got {other:?}"),
        }
    }

    #[test]
    fn a_follow_up_carries_its_conversation_and_ctrl_n_starts_a_new_one() {
        let ex = |q: &str, a: &str| Exchange {
            question: q.into(),
            answer: a.into(),
        };
        let mut m = Model::default();
        assert!(turn(&mut m, "When do they join on-call?", "Week eight.", false).is_empty());
        assert!(turn(&mut m, "Who pays?", "timed out", true).len() == 1);
        // The failed turn is shown but is not history.
        assert_eq!(
            turn(&mut m, "And shadowing?", "Week six.", false),
            [ex("When do they join on-call?", "Week eight.")]
        );
        ctrl(&mut m, 'n');
        assert!(m.fresh);
        assert!(turn(&mut m, "How long are snapshots kept?", "13 months.", false).is_empty());
        assert!(m.turns[3].starts_conversation && !m.fresh);
        assert_eq!(
            turn(&mut m, "And weekly ones?", "8 weeks.", false),
            [ex("How long are snapshots kept?", "13 months.")]
        );
        // A restart continues the saved conversation, marks included.
        let json = serde_json::to_vec(&m.turns).expect("json");
        let turns: Vec<Turn> = serde_json::from_slice(&json).expect("parse");
        let restored = Model::new(turns, Status::default());
        assert_eq!(restored.conversation().len(), 2);
        assert_eq!(
            restored.conversation()[0].question,
            "How long are snapshots kept?"
        );
    }

    #[test]
    fn ctrl_c_cancels_generation_then_quits() {
        let mut m = Model::default();
        type_text(&mut m, "q");
        press(&mut m, KeyCode::Enter);
        assert_eq!(ctrl(&mut m, 'c'), [Effect::Cancel]);
        assert_eq!(press(&mut m, KeyCode::Esc), [Effect::Cancel]);
        update(&mut m, Msg::Failed("cancelled".into()));
        assert_eq!(ctrl(&mut m, 'c'), [Effect::Quit]);
    }

    #[test]
    fn history_recall_and_help() {
        let mut m = Model::new(
            vec![
                Turn {
                    question: "first".into(),
                    ..Turn::default()
                },
                Turn {
                    question: "second".into(),
                    ..Turn::default()
                },
            ],
            Status::default(),
        );
        press(&mut m, KeyCode::Up);
        assert_eq!(m.input, "second");
        press(&mut m, KeyCode::Up);
        press(&mut m, KeyCode::Up);
        assert_eq!(m.input, "first");
        press(&mut m, KeyCode::Down);
        press(&mut m, KeyCode::Down);
        assert_eq!(m.input, "");
        press(&mut m, KeyCode::Char('?'));
        assert!(m.help);
        press(&mut m, KeyCode::Char('x'));
        assert!(
            !m.help && m.input.is_empty(),
            "the key that closes help is not typed"
        );
        press(&mut m, KeyCode::PageUp);
        assert_eq!(m.shown_turn().map(|t| t.question.as_str()), Some("first"));
    }

    #[test]
    fn tab_picks_a_source_to_open_and_ctrl_y_copies_the_answer() {
        let src = |path: &str| SourceView {
            path: path.into(),
            ..SourceView::default()
        };
        let mut m = Model::default();
        assert!(ctrl(&mut m, 'o').is_empty(), "nothing to open yet");
        type_text(&mut m, "q");
        press(&mut m, KeyCode::Enter);
        assert!(ctrl(&mut m, 'y').is_empty(), "no copy while streaming");
        update(&mut m, Msg::Token("42".into()));
        update(
            &mut m,
            Msg::Answered {
                sources: vec![src("a.md"), src("b.pdf")],
                mode: String::new(),
                ttft_ms: 1.0,
                tokens_per_s: 1.0,
            },
        );
        assert_eq!(ctrl(&mut m, 'o'), [Effect::Open(src("a.md"))]);
        press(&mut m, KeyCode::Tab);
        assert_eq!(ctrl(&mut m, 'o'), [Effect::Open(src("b.pdf"))]);
        press(&mut m, KeyCode::Tab);
        assert_eq!(m.source, 0, "wraps around");
        press(&mut m, KeyCode::BackTab);
        assert_eq!(m.source, 1);
        assert_eq!(ctrl(&mut m, 'y'), [Effect::Copy("42".into())]);
    }

    #[test]
    fn at_paths_and_ctrl_f_make_the_next_question_read_files_whole() {
        assert_eq!(
            split_files("how many rows @data/staff.csv has @notes.md ?"),
            (
                "how many rows has ?".to_string(),
                vec!["data/staff.csv".to_string(), "notes.md".to_string()]
            )
        );
        assert_eq!(
            split_files("mail me @ noon"),
            ("mail me @ noon".into(), vec![])
        );
        let mut m = Model::default();
        type_text(&mut m, "q");
        press(&mut m, KeyCode::Enter);
        update(
            &mut m,
            Msg::Answered {
                sources: vec![SourceView {
                    path: "my notes.md".into(),
                    ..SourceView::default()
                }],
                mode: String::new(),
                ttft_ms: 1.0,
                tokens_per_s: 1.0,
            },
        );
        ctrl(&mut m, 'f');
        assert_eq!(m.whole, ["my notes.md"]);
        type_text(&mut m, "list every date @a.md");
        let history = m.conversation();
        assert_eq!(
            press(&mut m, KeyCode::Enter),
            [Effect::Ask {
                question: "list every date".into(),
                history,
                files: vec!["a.md".into(), "my notes.md".into()],
            }]
        );
        assert!(m.whole.is_empty(), "for one question");
        // A second Ctrl-F takes the file back.
        let mut m2 = m.clone();
        m2.busy = false;
        m2.selected = Some(0);
        ctrl(&mut m2, 'f');
        ctrl(&mut m2, 'f');
        assert!(m2.whole.is_empty());
    }
}

//! Does the conversation help a follow-up? (`ape-chat bench follow-ups`)
//!
//! Two-turn pairs from the SQuAD v2 evaluation articles: two questions on
//! one paragraph that name the same thing, the second rewritten to refer
//! back to it ("When were the Normans in Normandy?" after a question about
//! Normandy becomes "When were the Normans in it?"). The SQuAD folder is
//! indexed as files; each pair's first question is answered alone, then
//! the follow-up twice: alone, and after the first turn. Per turn: is the
//! gold paragraph among the sources (recall@k), and does the answer contain
//! a gold answer. Differences are paired by pair, their intervals
//! resampled by article. Rows are kept per settings, so a run resumes.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::answer::{AskOptions, Exchange};
use crate::engine::Engine;
use crate::eval::datasets::squad::{self, Articles, Squad};
use crate::eval::stats::{paired_difference, Clusters, Estimate};
use crate::kvstore::KvStore;
use crate::workspace::{FolderOptions, Workspace};

/// Raised when what a row means changes (rows of another version are not
/// reused).
const METHOD: u32 = 1;

/// One two-turn pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// The follow-up's SQuAD id.
    pub id: String,
    pub article: String,
    /// The paragraph's file in the SQuAD folder (both questions' gold).
    pub gold: String,
    pub first: String,
    pub first_answers: Vec<String>,
    /// The follow-up as asked: `referent` replaced by a pronoun.
    pub follow_up: String,
    pub follow_up_answers: Vec<String>,
    pub referent: String,
}

/// Words that start a question with a capital letter without naming
/// anything.
const NOT_NAMES: &[&str] = &[
    "What",
    "When",
    "Where",
    "Who",
    "Whom",
    "Whose",
    "Which",
    "Why",
    "How",
    "In",
    "On",
    "At",
    "The",
    "A",
    "An",
    "Of",
    "For",
    "To",
    "By",
    "During",
    "After",
    "Before",
    "Is",
    "Was",
    "Were",
    "Are",
    "Did",
    "Does",
    "Do",
    "From",
    "According",
    "Along",
    "Besides",
    "Other",
    "As",
    "If",
    "Name",
    "I",
    "With",
    "Since",
    "Until",
    "Under",
    "Between",
    "Can",
    "Could",
    "Has",
    "Had",
    "Have",
];

/// Words that may follow a name used as a noun phrase of its own.
const FOLLOWS_A_NAME: &[&str] = &[
    "is", "was", "were", "are", "has", "had", "have", "did", "does", "do", "in", "on", "at", "of",
    "to", "for", "with", "by", "from", "and", "or", "as", "that", "which", "who", "when", "where",
    "after", "before", "during", "between", "into", "over", "under", "become", "became", "get",
    "got", "use", "used", "can", "could", "will", "would", "should", "first", "last", "still",
];

/// Words after which a name is a subject ("did Tesla invent").
const AUXILIARIES: &[&str] = &[
    "did", "does", "do", "was", "is", "were", "are", "has", "have", "had", "can", "could", "would",
    "will", "should", "might", "may",
];

/// The capitalised runs of words in `question` ("Notre Dame", "Normans"),
/// possessive `'s` dropped.
fn names(question: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for raw in question.split_whitespace() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        let w = w.strip_suffix("'s").unwrap_or(w);
        let capital = w.chars().next().is_some_and(char::is_uppercase);
        if capital && !NOT_NAMES.contains(&w) {
            run.push(w);
        } else if !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
        // A run ends at punctuation after its word.
        if !run.is_empty() && raw.ends_with([',', '?', ';', ':', ')']) {
            out.push(run.join(" "));
            run.clear();
        }
    }
    if !run.is_empty() {
        out.push(run.join(" "));
    }
    out
}

/// `question` with `name` replaced by a pronoun (`its`/`their` before a
/// possessive), or `None` when it does not occur as whole words.
fn refer_back(question: &str, name: &str) -> Option<String> {
    let at = question.match_indices(name).find(|&(i, _)| {
        let before = question[..i].chars().next_back();
        let after = question[i + name.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })?;
    let (i, end) = (at.0, at.0 + name.len());
    // "a Turing machine", "the Norman conquest": the name modifies a noun,
    // and no pronoun can stand in for it.
    let word_before = question[..i].split_whitespace().next_back().unwrap_or("");
    let word_after = question[end..].split_whitespace().next().unwrap_or("");
    let lowercase_after = word_after.chars().next().is_some_and(char::is_lowercase);
    let before = word_before.to_lowercase();
    let possessive = question[end..].starts_with("'s");
    // A name that modifies the noun after it ("a Turing machine") stands
    // as a subject only after an auxiliary ("did Tesla invent").
    let modifies = lowercase_after
        && !possessive
        && !FOLLOWS_A_NAME.contains(&word_after.trim_matches(|c: char| !c.is_alphanumeric()))
        && !AUXILIARIES.contains(&before.as_str());
    // "the Wars of Religion": part of a longer name.
    let inside_a_name = before == "of"
        && question[..i]
            .split_whitespace()
            .rev()
            .nth(1)
            .is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase));
    if matches!(before.as_str(), "a" | "an") || modifies || inside_a_name {
        return None;
    }
    let plural = name.ends_with('s') && !name.ends_with("ss") && !name.contains(' ');
    let rest = &question[end..];
    let (pronoun, rest) = match rest.strip_prefix("'s") {
        Some(r) => (if plural { "their" } else { "its" }, r),
        None => (if plural { "they" } else { "it" }, rest),
    };
    // "the Normans" → "they", not "the they".
    let head = question[..i]
        .strip_suffix("the ")
        .or_else(|| question[..i].strip_suffix("The "))
        .unwrap_or(&question[..i]);
    let mut out = format!("{head}{pronoun}{rest}");
    if head.is_empty() {
        // Sentence-initial: capitalise the pronoun.
        let mut c = out.chars();
        out = c
            .next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default();
    }
    Some(out)
}

/// Up to `n` pairs from the `articles`, at most one per paragraph, taken
/// from the articles in turn so every article contributes.
pub fn pairs(data: &Squad, articles: Articles, n: usize) -> Vec<Pair> {
    let mut per_article: Vec<Vec<Pair>> = Vec::new();
    for (a, article) in data.data.iter().enumerate() {
        if !articles.includes(a) {
            continue;
        }
        let mut found = Vec::new();
        for (p, para) in article.paragraphs.iter().enumerate() {
            let qas: Vec<_> = para.qas.iter().filter(|q| !q.is_impossible).collect();
            let pair = qas.iter().enumerate().find_map(|(i, first)| {
                qas.iter().enumerate().find_map(|(j, second)| {
                    if i == j {
                        return None;
                    }
                    // The longest name both questions use.
                    let mut shared: Vec<String> = names(&second.question)
                        .into_iter()
                        .filter(|n| n.len() >= 4 && first.question.contains(n.as_str()))
                        .collect();
                    shared.sort_by_key(|n| std::cmp::Reverse(n.len()));
                    let name = shared.into_iter().next()?;
                    let follow_up = refer_back(&second.question, &name)?;
                    // The referent must be gone, not named twice.
                    (!follow_up.contains(&name)).then(|| Pair {
                        id: second.id.clone(),
                        article: article.title.clone(),
                        gold: squad::paragraph_path(a, &article.title, p),
                        first: first.question.clone(),
                        first_answers: first.answers.iter().map(|g| g.text.clone()).collect(),
                        follow_up,
                        follow_up_answers: second.answers.iter().map(|g| g.text.clone()).collect(),
                        referent: name,
                    })
                })
            });
            found.extend(pair);
        }
        per_article.push(found);
    }
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < n && per_article.iter().any(|v| v.len() > round) {
        for v in &per_article {
            if let Some(p) = v.get(round) {
                if out.len() < n {
                    out.push(p.clone());
                }
            }
        }
        round += 1;
    }
    out
}

/// One turn's outcome.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Turn {
    pub answer: String,
    /// The gold paragraph was among the sources.
    pub found: bool,
    /// The answer contains a gold answer.
    pub contains: bool,
    pub ttft_ms: f64,
}

/// One pair's outcome in every condition.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub stamp: String,
    pub pair: Pair,
    pub first: Turn,
    pub alone: Turn,
    pub with_history: Turn,
}

/// A rate in one condition and its interval.
#[derive(Clone, Debug, Serialize)]
pub struct Rates {
    pub first_turn: f64,
    pub follow_up_alone: f64,
    pub follow_up_with_history: f64,
    /// With history − alone, paired by pair, resampled by article.
    pub gain: Estimate,
}

/// The figures.
#[derive(Clone, Debug, Serialize)]
pub struct FollowUpReport {
    pub pairs: usize,
    pub articles: usize,
    pub k: crate::index::TopK,
    pub mode: String,
    pub recall: Rates,
    pub contains: Rates,
    /// Where the rows are (resumable).
    pub results: PathBuf,
    pub rows: Vec<Row>,
}

/// What to run.
pub struct FollowUpOptions {
    pub squad_file: PathBuf,
    pub folder: FolderOptions,
    pub ask: AskOptions,
    pub pairs: usize,
}

/// What identifies comparable rows: the model, the answer settings, the
/// folder's chunking and this method.
fn stamp(engine: &Engine, o: &FollowUpOptions) -> String {
    let model = engine
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = format!(
        "m{METHOD} {model} {} k{} {:?} t{} c{} {}",
        o.ask.mode,
        o.ask.top_k,
        o.ask.retrieval,
        o.ask.generate.max_tokens,
        o.folder.chunk_tokens,
        o.folder.system_prompt
    );
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

/// Runs the pairs (rows already in the results file are reused).
pub fn follow_ups(
    engine: &Engine,
    o: &FollowUpOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<FollowUpReport, BenchError> {
    let setup = |e: String| BenchError::Setup(e);
    let data = squad::load(&o.squad_file).map_err(|e| setup(e.to_string()))?;
    let pairs = pairs(&data, Articles::Evaluation, o.pairs);
    if pairs.is_empty() {
        return Err(setup(format!(
            "no follow-up pairs in {}",
            o.squad_file.display()
        )));
    }
    let dir = crate::paths::squad_folder();
    squad::write_folder(&data, &dir)?;
    let mut ws = Workspace::open(engine, &dir, &o.folder, KvStore::default_location())
        .map_err(|e| setup(e.to_string()))?;
    crate::service::index(&mut ws, false, &mut |_| {}).map_err(|e| setup(e.to_string()))?;

    let stamp = stamp(engine, o);
    let results = crate::paths::eval_results_dir().join(format!("follow-ups-{stamp}.jsonl"));
    let mut done: HashMap<String, Row> = read_rows(&results, &stamp);
    std::fs::create_dir_all(crate::paths::eval_results_dir())?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)?;
    let mut rows = Vec::new();
    for (i, pair) in pairs.iter().enumerate() {
        progress(i, pairs.len());
        if let Some(row) = done.remove(&pair.id).filter(|r| &r.pair == pair) {
            rows.push(row);
            continue;
        }
        let mut turn = |question: &str, history: &[Exchange], golds: &[String]| {
            let a = ws
                .ask(question, history, &o.ask, &mut |_| true)
                .map_err(|e| setup(e.to_string()))?;
            let text = a.generated.text.clone();
            Ok::<_, BenchError>(Turn {
                found: a.sources.iter().any(|s| s.chunk.path == pair.gold),
                contains: golds
                    .iter()
                    .any(|g| crate::eval::score::contains(&text, g) > 0.0),
                ttft_ms: a.ttft.as_secs_f64() * 1e3,
                answer: text,
            })
        };
        let first = turn(&pair.first, &[], &pair.first_answers)?;
        let alone = turn(&pair.follow_up, &[], &pair.follow_up_answers)?;
        let history = [Exchange {
            question: pair.first.clone(),
            answer: first.answer.clone(),
        }];
        let with_history = turn(&pair.follow_up, &history, &pair.follow_up_answers)?;
        let row = Row {
            stamp: stamp.clone(),
            pair: pair.clone(),
            first,
            alone,
            with_history,
        };
        let line = serde_json::to_string(&row).map_err(|e| setup(e.to_string()))?;
        writeln!(file, "{line}")?;
        rows.push(row);
    }
    progress(pairs.len(), pairs.len());
    Ok(report(rows, o, results))
}

fn read_rows(path: &Path, stamp: &str) -> HashMap<String, Row> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Row>(l).ok())
        .filter(|r| r.stamp == stamp)
        .map(|r| (r.pair.id.clone(), r))
        .collect()
}

fn report(rows: Vec<Row>, o: &FollowUpOptions, results: PathBuf) -> FollowUpReport {
    let keys: Vec<&str> = rows.iter().map(|r| r.pair.article.as_str()).collect();
    let clusters = Clusters::of(&keys);
    let rates = |of: fn(&Turn) -> bool| {
        let col = |pick: fn(&Row) -> &Turn| -> Vec<f64> {
            rows.iter()
                .map(|r| f64::from(u8::from(of(pick(r)))))
                .collect()
        };
        let (first, alone, with) = (
            col(|r| &r.first),
            col(|r| &r.alone),
            col(|r| &r.with_history),
        );
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        Rates {
            first_turn: mean(&first),
            follow_up_alone: mean(&alone),
            follow_up_with_history: mean(&with),
            gain: paired_difference(&with, &alone, &clusters),
        }
    };
    FollowUpReport {
        pairs: rows.len(),
        articles: clusters.len(),
        k: o.ask.top_k,
        mode: o.ask.mode.to_string(),
        recall: rates(|t| t.found),
        contains: rates(|t| t.contains),
        results,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capitalised_runs_and_question_words_are_not_names() {
        assert_eq!(
            names("What did the Normans call Notre Dame's towers in Paris?"),
            ["Normans", "Notre Dame", "Paris"]
        );
        assert!(names("When was it built?").is_empty());
    }

    #[test]
    fn the_follow_up_refers_back_with_a_pronoun() {
        let r = |q: &str, n: &str| refer_back(q, n);
        assert_eq!(
            r("When were the Normans in Normandy?", "Normandy").as_deref(),
            Some("When were the Normans in it?")
        );
        assert_eq!(
            r("What religion were the Normans?", "Normans").as_deref(),
            Some("What religion were they?")
        );
        assert_eq!(
            r("What is Warsaw's population?", "Warsaw").as_deref(),
            Some("What is its population?")
        );
        assert_eq!(
            r("Normandy was named after whom?", "Normandy").as_deref(),
            Some("It was named after whom?")
        );
        assert_eq!(
            r("Who ruled Normandyland?", "Normandy"),
            None,
            "whole words only"
        );
        assert_eq!(r("What does a Turing machine do?", "Turing"), None);
        assert_eq!(r("When was the Norman conquest?", "Norman"), None);
        assert_eq!(
            r("What ends a deterministic Turing machine?", "Turing"),
            None
        );
        assert_eq!(
            r("What treaty ended the Wars of Religion?", "Religion"),
            None
        );
        assert_eq!(
            r("What did Tesla invent?", "Tesla").as_deref(),
            Some("What did it invent?")
        );
        assert_eq!(
            r("What river runs through the Amazon?", "Amazon").as_deref(),
            Some("What river runs through it?")
        );
    }

    #[test]
    fn pairs_share_a_paragraph_and_a_name_and_spread_over_articles() {
        let json = r#"{"data":[
          {"title":"Normans","paragraphs":[{"context":"P","qas":[
            {"id":"a","question":"In what country is Normandy located?","answers":[{"text":"France"}]},
            {"id":"b","question":"When were the Normans in Normandy?","answers":[{"text":"10th century"}]},
            {"id":"c","question":"Who was unanswerable?","answers":[],"is_impossible":true}]}]},
          {"title":"Skip","paragraphs":[]},
          {"title":"Other","paragraphs":[{"context":"Q","qas":[
            {"id":"d","question":"What did Tesla invent?","answers":[{"text":"AC"}]},
            {"id":"e","question":"Where was Tesla born?","answers":[{"text":"Smiljan"}]}]}]}]}"#;
        let data: Squad = serde_json::from_str(json).expect("squad");
        let p = pairs(&data, Articles::All, 10);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].follow_up, "When were the Normans in it?");
        assert_eq!(p[0].first_answers, ["France"]);
        assert_eq!(p[0].gold, squad::paragraph_path(0, "Normans", 0));
        assert_eq!(p[1].first, "What did Tesla invent?");
        assert_eq!(p[1].follow_up, "Where was it born?");
        assert_eq!(p[1].id, "e");
        assert_eq!(pairs(&data, Articles::All, 1).len(), 1);
    }
}

//! SQuAD v2 (`scripts/setup.sh --eval-data`): paragraphs grouped by
//! article, questions with gold answers, unanswerable ones flagged; and its
//! conversion to records: each answerable question with its own paragraph
//! plus distractor paragraphs from the same article, in a seeded shuffled
//! order; or two questions asked at once, whose answers sit in different
//! paragraphs ([`to_pair_records`]).

use std::path::Path;

use serde::Deserialize;

use super::{DatasetError, Record};

#[derive(Debug, Deserialize)]
pub struct Squad {
    pub data: Vec<Article>,
}

#[derive(Debug, Deserialize)]
pub struct Article {
    pub title: String,
    pub paragraphs: Vec<Paragraph>,
}

#[derive(Debug, Deserialize)]
pub struct Paragraph {
    pub context: String,
    pub qas: Vec<Qa>,
}

#[derive(Debug, Deserialize)]
pub struct Qa {
    pub id: String,
    pub question: String,
    #[serde(default)]
    pub answers: Vec<GoldAnswer>,
    #[serde(default)]
    pub is_impossible: bool,
}

#[derive(Debug, Deserialize)]
pub struct GoldAnswer {
    pub text: String,
}

/// Reads a SQuAD JSON file.
pub fn load(path: &Path) -> Result<Squad, DatasetError> {
    let bytes = std::fs::read(path).map_err(|error| DatasetError::Io {
        path: path.to_owned(),
        error,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| DatasetError::Invalid {
        path: path.to_owned(),
        line: None,
        message: format!("not SQuAD JSON: {e}"),
    })
}

/// Relative file path a paragraph is written to when SQuAD becomes a folder.
pub fn paragraph_path(article: usize, title: &str, paragraph: usize) -> String {
    let slug: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!(
        "{article:02}-{}/p{paragraph:03}.txt",
        slug.trim_matches('-')
    )
}

/// Writes every paragraph of `squad` under `dir` as a file (at
/// [`paragraph_path`]; files already there are kept): SQuAD as a folder
/// to index. Returns how many paragraphs there are.
pub fn write_folder(squad: &Squad, dir: &Path) -> std::io::Result<usize> {
    let mut paragraphs = 0;
    for (a, article) in squad.data.iter().enumerate() {
        for (p, para) in article.paragraphs.iter().enumerate() {
            let file = dir.join(paragraph_path(a, &article.title, p));
            if !file.exists() {
                std::fs::create_dir_all(file.parent().unwrap_or(dir))?;
                crate::fsutil::write_atomic(&file, &[para.context.as_bytes()])?;
            }
            paragraphs += 1;
        }
    }
    Ok(paragraphs)
}

/// Which SQuAD articles a dataset draws on. Every fourth article (the
/// 4th, 8th, …) is kept for calibration and the rest for evaluation, so
/// the two never share a paragraph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Articles {
    All,
    Evaluation,
    Calibration,
}

impl Articles {
    /// The articles of `squad` drawn on, in order.
    pub fn of(self, squad: &Squad) -> impl Iterator<Item = &Article> {
        squad
            .data
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.includes(*i))
            .map(|(_, a)| a)
    }

    /// Whether the `article`-th article (0-based) is drawn on.
    pub fn includes(self, article: usize) -> bool {
        let calibration = article % 4 == 3;
        match self {
            Articles::All => true,
            Articles::Evaluation => !calibration,
            Articles::Calibration => calibration,
        }
    }
}

/// The paragraphs `own` of `paras`, then others of them drawn (seeded by
/// `next`) until there are `contexts`.
fn with_others(
    paras: &[Paragraph],
    own: &[usize],
    contexts: usize,
    next: &mut impl FnMut(usize) -> usize,
) -> Vec<String> {
    let mut ctx: Vec<String> = own.iter().map(|&i| paras[i].context.clone()).collect();
    let mut others: Vec<usize> = (0..paras.len()).filter(|j| !own.contains(j)).collect();
    while ctx.len() < contexts && !others.is_empty() {
        let j = others.swap_remove(next(others.len()));
        ctx.push(paras[j].context.clone());
    }
    ctx
}

/// SQuAD → records: answerable questions (unless `unanswerable`), each with
/// its paragraph and `contexts - 1` other paragraphs of the same article,
/// from the chosen `articles`.
pub fn to_records(
    squad: &Squad,
    contexts: usize,
    unanswerable: bool,
    seed: u64,
    articles: Articles,
) -> Vec<Record> {
    let mut rng = crate::eval::stats::Rng::new(seed);
    let mut next = move |n: usize| rng.below(n);
    let mut out = Vec::new();
    for article in articles.of(squad) {
        let paras = &article.paragraphs;
        for (pi, para) in paras.iter().enumerate() {
            for qa in para.qas.iter().filter(|q| unanswerable || !q.is_impossible) {
                let mut ctx = with_others(paras, &[pi], contexts, &mut next);
                let gold = next(ctx.len());
                ctx.swap(0, gold);
                let mut answers: Vec<String> = qa.answers.iter().map(|a| a.text.clone()).collect();
                answers.dedup();
                out.push(Record {
                    id: qa.id.clone(),
                    question: qa.question.clone(),
                    contexts: ctx,
                    answers,
                    group: Some(article.title.clone()),
                    gold_context: Some(gold),
                    parts: Vec::new(),
                });
            }
        }
    }
    out
}

/// A question's gold aliases, deduplicated, in order.
fn aliases(qa: &Qa) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &qa.answers {
        if !out.contains(&a.text) {
            out.push(a.text.clone());
        }
    }
    out
}

/// SQuAD → records whose answer needs two paragraphs: two answerable
/// questions of one article, from different paragraphs, asked together
/// ("Answer both questions. (1) … (2) …"), with both paragraphs and
/// `contexts - 2` others of the article in a seeded shuffled order. The
/// answer is in [`Record::parts`] (one per question) and `answers` holds it
/// written out ("(1) … (2) …") for likelihood and F1. Each paragraph gives
/// at most one question (seeded), paragraphs are paired at random within
/// their article, and a pair whose answers contain one another is left out
/// (one answer would count for both).
///
/// Why built, not downloaded: no package registry holds a multi-paragraph
/// question set with its documents (FanOutQA's package ships questions
/// without the pages; MuSiQue, 2WikiMultihopQA and the like have none).
/// Every question and paragraph here is SQuAD's; only the pairing is ours.
pub fn to_pair_records(
    squad: &Squad,
    contexts: usize,
    seed: u64,
    articles: Articles,
) -> Vec<Record> {
    use crate::eval::score::contains;
    let mut rng = crate::eval::stats::Rng::new(seed);
    let mut next = move |n: usize| rng.below(n);
    let mut out = Vec::new();
    for article in articles.of(squad) {
        let paras = &article.paragraphs;
        let mut picks: Vec<(usize, &Qa)> = Vec::new();
        for (pi, para) in paras.iter().enumerate() {
            let answerable: Vec<&Qa> = para
                .qas
                .iter()
                .filter(|q| !q.is_impossible && !q.answers.is_empty())
                .collect();
            if !answerable.is_empty() {
                picks.push((pi, answerable[next(answerable.len())]));
            }
        }
        for i in (1..picks.len()).rev() {
            picks.swap(i, next(i + 1));
        }
        for pair in picks.chunks_exact(2) {
            let [(pa, qa), (pb, qb)] = [pair[0], pair[1]];
            let (a, b) = (aliases(qa), aliases(qb));
            let overlap = a.iter().any(|x| {
                b.iter()
                    .any(|y| contains(x, y) > 0.0 || contains(y, x) > 0.0)
            });
            if overlap || paras[pa].context == paras[pb].context {
                continue;
            }
            let mut ctx = with_others(paras, &[pa, pb], contexts, &mut next);
            for i in (1..ctx.len()).rev() {
                ctx.swap(i, next(i + 1));
            }
            out.push(Record {
                id: format!("{}{}{}", qa.id, super::ID_JOIN, qb.id),
                question: format!(
                    "Answer both questions. (1) {} (2) {}",
                    qa.question.trim(),
                    qb.question.trim()
                ),
                contexts: ctx,
                answers: vec![format!("(1) {} (2) {}", a[0].trim(), b[0].trim())],
                group: Some(article.title.clone()),
                gold_context: None,
                parts: vec![a, b],
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squad() -> Squad {
        let json = r#"{"data":[{"title":"T","paragraphs":[
            {"context":"P0 about cats","qas":[{"id":"a","question":"Q0?","answers":[{"text":"cats"},{"text":"cats"}]}]},
            {"context":"P1 about dogs","qas":[{"id":"b","question":"Q1?","answers":[],"is_impossible":true}]},
            {"context":"P2 about owls","qas":[]}]}]}"#;
        serde_json::from_str(json).expect("squad")
    }

    #[test]
    fn parses_squad_and_names_paragraph_files() {
        let json = r#"{"version":"v2.0","data":[{"title":"Super_Bowl 50","paragraphs":[{"context":"C",
            "qas":[{"id":"1","question":"Q?","answers":[{"text":"A","answer_start":0}],"is_impossible":false},
                   {"id":"2","question":"U?","answers":[],"is_impossible":true}]}]}]}"#;
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("s.json");
        std::fs::write(&p, json).expect("write");
        let s = load(&p).expect("parse");
        assert!(s.data[0].paragraphs[0].qas[1].is_impossible);
        assert_eq!(s.data[0].paragraphs[0].qas[0].answers[0].text, "A");
        assert_eq!(
            paragraph_path(3, "Super_Bowl 50", 7),
            "03-super-bowl-50/p007.txt"
        );
    }

    #[test]
    fn converter_keeps_the_gold_paragraph_and_adds_distractors() {
        let recs = to_records(&squad(), 3, false, 7, Articles::All);
        assert_eq!(
            recs.len(),
            1,
            "unanswerable questions are left out by default"
        );
        let r = &recs[0];
        assert_eq!(r.contexts.len(), 3);
        let gold = r.gold_context.expect("the question's paragraph is named");
        assert_eq!(r.contexts[gold], "P0 about cats");
        assert_eq!(r.answers, ["cats"]);
        assert_eq!(
            to_records(&squad(), 3, false, 7, Articles::All),
            recs,
            "seeded: reproducible"
        );
        assert_eq!(to_records(&squad(), 3, true, 7, Articles::All).len(), 2);
        assert_eq!(
            to_records(&squad(), 9, false, 7, Articles::All)[0]
                .contexts
                .len(),
            3,
            "limited by the article"
        );
    }

    #[test]
    fn pair_records_need_two_paragraphs_of_one_article() {
        let para = |i: usize, answer: &str| {
            format!(
                r#"{{"context":"Paragraph {i} says {answer}.","qas":[
                {{"id":"u{i}","question":"U{i}?","answers":[],"is_impossible":true}},
                {{"id":"q{i}","question":" Q{i}? ","answers":[{{"text":"{answer}"}},{{"text":"{answer}"}}]}}]}}"#
            )
        };
        let answers = ["cats", "dogs", "owls", "newts", "bats", "dogs and cats"];
        let paras: Vec<String> = answers
            .iter()
            .enumerate()
            .map(|(i, a)| para(i, a))
            .collect();
        let json = format!(
            r#"{{"data":[{{"title":"T","paragraphs":[{}]}},{{"title":"One","paragraphs":[{}]}}]}}"#,
            paras.join(","),
            para(9, "moles")
        );
        let squad: Squad = serde_json::from_str(&json).expect("squad");
        let recs = to_pair_records(&squad, 4, 3, Articles::All);
        assert!(!recs.is_empty());
        assert!(recs.len() <= 3, "each paragraph asked once: {}", recs.len());
        for r in &recs {
            assert_eq!(
                r.group.as_deref(),
                Some("T"),
                "an article of one paragraph has no pair"
            );
            assert_eq!(r.contexts.len(), 4);
            assert_eq!(r.parts.len(), 2);
            let ids: Vec<usize> =
                r.id.split(crate::eval::datasets::ID_JOIN)
                    .map(|id| id[1..].parse().expect("q<i>"))
                    .collect();
            assert_ne!(ids[0], ids[1]);
            for (part, &i) in r.parts.iter().zip(&ids) {
                assert_eq!(part, &[answers[i]], "aliases deduplicated");
                let own = format!("Paragraph {i} says {}.", answers[i]);
                assert!(r.contexts.contains(&own), "both paragraphs are read");
            }
            assert_eq!(
                r.question,
                format!("Answer both questions. (1) Q{}? (2) Q{}?", ids[0], ids[1])
            );
            assert_eq!(
                r.answers,
                [format!("(1) {} (2) {}", answers[ids[0]], answers[ids[1]])]
            );
            assert!(
                !(ids.contains(&5) && (ids.contains(&0) || ids.contains(&1))),
                "answers holding one another are not paired: {}",
                r.id
            );
        }
        assert_eq!(to_pair_records(&squad, 4, 3, Articles::All), recs, "seeded");
        let pairs: Vec<Vec<usize>> = (0..20)
            .flat_map(|seed| to_pair_records(&squad, 4, seed, Articles::All))
            .map(|r| {
                r.id.split(crate::eval::datasets::ID_JOIN)
                    .map(|id| id[1..].parse::<usize>().expect("i"))
                    .collect()
            })
            .collect();
        assert!(
            pairs
                .iter()
                .all(|ids| !(ids.contains(&5) && (ids.contains(&0) || ids.contains(&1)))),
            "answers holding one another are never paired: {pairs:?}"
        );
        assert!(
            (0..6).all(|i| pairs.iter().any(|ids| ids.contains(&i))),
            "pairs vary with the seed"
        );
    }

    #[test]
    fn evaluation_and_calibration_articles_never_meet() {
        let json = (0..8)
            .map(|i| format!(r#"{{"title":"A{i}","paragraphs":[{{"context":"P{i}","qas":[{{"id":"q{i}","question":"?","answers":[{{"text":"x"}}]}}]}}]}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let squad: Squad = serde_json::from_str(&format!(r#"{{"data":[{json}]}}"#)).expect("squad");
        let groups = |a| -> Vec<String> {
            to_records(&squad, 1, false, 1, a)
                .into_iter()
                .filter_map(|r| r.group)
                .collect()
        };
        assert_eq!(groups(Articles::Calibration), ["A3", "A7"]);
        assert_eq!(groups(Articles::Evaluation).len(), 6);
        assert!(groups(Articles::Evaluation)
            .iter()
            .all(|g| g != "A3" && g != "A7"));
        assert_eq!(groups(Articles::All).len(), 8);
    }
}

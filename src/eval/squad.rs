//! SQuAD v2 (`scripts/setup.sh --eval-data`): paragraphs grouped by article,
//! questions with gold answers, unanswerable ones flagged.

use std::path::Path;

use serde::Deserialize;

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
pub fn load(path: &Path) -> anyhow::Result<Squad> {
    let bytes = std::fs::read(path).map_err(|e| {
        anyhow::anyhow!("{}: {e} (run scripts/setup.sh --eval-data)", path.display())
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: not SQuAD JSON: {e}", path.display()))
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

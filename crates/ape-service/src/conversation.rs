//! Conversations as scripts and clients write them: a file of earlier
//! turns (`--ask --conversation FILE`), or chat messages (the HTTP API's
//! `messages`). Both become the question and the [`Exchange`]s before it.

use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::answer::Exchange;

/// Why a conversation cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConversationError {
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("messages: {0}")]
    Messages(String),
}

/// One chat message (`role`: `system`, `user` or `assistant`). Its
/// `content` is text, as clients send it: a string, an array of text parts
/// (`[{"type": "text", "text": …}]`, joined by newlines) or `null` (an
/// assistant turn with nothing said); fields ape-chat has no use for
/// (`name`, …) are ignored.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    #[serde(default, deserialize_with = "text_content")]
    pub content: String,
}

/// A message's content as one text; a part that is not text (an image, a
/// file, audio) is refused by its type, never dropped unseen.
fn text_content<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error;
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Null => Ok(String::new()),
        Value::Array(parts) => {
            let mut texts = Vec::with_capacity(parts.len());
            for (i, part) in parts.iter().enumerate() {
                let kind = part.get("type").and_then(Value::as_str);
                match (kind, part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(t)) => texts.push(t),
                    (Some("text"), None) => {
                        return Err(D::Error::custom(format!(
                            "content part {i} is a text part without a \"text\" string"
                        )))
                    }
                    (Some(other), _) => {
                        return Err(D::Error::custom(format!(
                            "content part {i} is {other:?}: only text parts are supported"
                        )))
                    }
                    (None, _) => {
                        return Err(D::Error::custom(format!(
                            "content part {i} has no \"type\""
                        )))
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        _ => Err(D::Error::custom(
            "content must be a string or an array of text parts",
        )),
    }
}

/// A conversation file: `[{"question", "answer"}…]` as `--conversation`
/// writes it, or chat messages (`[{"role", "content"}…]`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Turns {
    Exchanges(Vec<Exchange>),
    Messages(Vec<Message>),
}

/// The earlier turns in `path`; none when it does not exist yet.
pub fn load(path: &Path) -> Result<Vec<Exchange>, ConversationError> {
    let fail = |reason: String| ConversationError::File {
        path: path.display().to_string(),
        reason,
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fail(e.to_string())),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let turns: Turns = serde_json::from_slice(&bytes).map_err(|_| {
        fail(
            "not a conversation: expected a JSON array of {\"question\", \"answer\"} \
             or of {\"role\", \"content\"} messages"
                .into(),
        )
    })?;
    match turns {
        Turns::Exchanges(e) => Ok(e),
        Turns::Messages(m) => match exchanges(&m) {
            Ok((e, None)) => Ok(e),
            Ok((_, Some(_))) => Err(fail("the last question has no answer".into())),
            Err(e) => Err(fail(e.to_string())),
        },
    }
}

/// Writes `turns` to `path` atomically (the file a script continues).
pub fn save(path: &Path, turns: &[Exchange]) -> Result<(), ConversationError> {
    let json = serde_json::to_vec_pretty(turns).map_err(|e| ConversationError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    crate::fsutil::write_atomic(path, &[&json]).map_err(|e| ConversationError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Adds `turn` to the conversation in `path` under a lock (a hidden
/// `.NAME.lock` beside it): the file is read again under the lock and the
/// turn appended, so two processes continuing one conversation both keep
/// their turns instead of the later overwriting the earlier's.
pub fn append(path: &Path, turn: Exchange) -> Result<(), ConversationError> {
    let fail = |reason: String| ConversationError::File {
        path: path.display().to_string(),
        reason,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock_path = path.with_file_name(format!(".{name}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| fail(format!("cannot lock it ({}): {e}", lock_path.display())))?;
    lock.lock()
        .map_err(|e| fail(format!("cannot lock it: {e}")))?;
    let mut turns = load(path)?;
    turns.push(turn);
    save(path, &turns)
}

/// Completed exchanges from messages, and the user's text after the
/// last answer: system messages are skipped (the folder's system prompt is
/// fixed: chunk states were encoded after it); consecutive user (or
/// assistant) messages are one turn.
fn exchanges(messages: &[Message]) -> Result<(Vec<Exchange>, Option<String>), ConversationError> {
    let mut out: Vec<Exchange> = Vec::new();
    let mut question: Option<String> = None;
    let mut answered = false;
    for (i, m) in messages.iter().enumerate() {
        match m.role.as_str() {
            "system" | "developer" => {}
            "user" => {
                answered = false;
                question = Some(match question.take() {
                    Some(q) => format!("{q}\n\n{}", m.content),
                    None => m.content.clone(),
                });
            }
            "assistant" => match (question.take(), out.last_mut()) {
                (Some(q), _) => {
                    out.push(Exchange {
                        question: q,
                        answer: m.content.clone(),
                    });
                    answered = true;
                }
                (None, Some(last)) if answered => {
                    last.answer = format!("{}\n\n{}", last.answer, m.content);
                }
                (None, _) => {
                    return Err(ConversationError::Messages(format!(
                        "message {i}: an assistant message with no question before it"
                    )))
                }
            },
            role => {
                return Err(ConversationError::Messages(format!(
                    "message {i}: unknown role {role:?} (system, user or assistant)"
                )))
            }
        }
    }
    Ok((out, question))
}

/// A chat request's messages as the question (the last message, from the
/// user) and the conversation before it.
pub fn from_messages(messages: &[Message]) -> Result<(String, Vec<Exchange>), ConversationError> {
    let Some((last, earlier)) = messages.split_last() else {
        return Err(ConversationError::Messages("no messages".into()));
    };
    if last.role != "user" {
        return Err(ConversationError::Messages(format!(
            "the last message must be the user's question, not {:?}",
            last.role
        )));
    }
    let (history, unanswered) = exchanges(earlier)?;
    // User messages after the last answer are all part of the question.
    let question = match unanswered {
        Some(q) => format!("{q}\n\n{}", last.content),
        None => last.content.clone(),
    };
    if question.trim().is_empty() {
        return Err(ConversationError::Messages("the question is empty".into()));
    }
    Ok((question, history))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }

    #[test]
    fn messages_become_the_question_and_the_exchanges_before_it() {
        let (q, h) = from_messages(&[
            msg("system", "be brief"),
            msg("user", "When do they join on-call?"),
            msg("assistant", "Week eight."),
            msg("user", "And shadowing?"),
        ])
        .expect("valid");
        assert_eq!(q, "And shadowing?");
        assert_eq!(
            h,
            [Exchange {
                question: "When do they join on-call?".into(),
                answer: "Week eight.".into()
            }]
        );
    }

    #[test]
    fn malformed_conversations_are_refused_with_the_reason() {
        let err = |m: &[Message]| from_messages(m).expect_err("refused").to_string();
        assert!(err(&[]).contains("no messages"));
        assert!(err(&[msg("user", "a"), msg("assistant", "b")]).contains("last message"));
        assert!(err(&[msg("user", "  ")]).contains("empty"));
        // Consecutive messages of one role are one turn.
        let (q, h) = from_messages(&[
            msg("user", "a"),
            msg("assistant", "b"),
            msg("assistant", "c"),
            msg("user", "d"),
            msg("user", "e"),
        ])
        .expect("valid");
        assert_eq!((q.as_str(), h.len()), ("d\n\ne", 1));
        assert_eq!(h[0].answer, "b\n\nc");
        assert!(err(&[msg("assistant", "a"), msg("user", "b")]).contains("no question"));
        assert!(err(&[msg("tool", "x"), msg("user", "b")]).contains("unknown role"));
    }

    #[test]
    fn content_is_a_string_text_parts_or_null() {
        let parse = |json: &str| serde_json::from_str::<Message>(json).map_err(|e| e.to_string());
        let text = |json: &str| parse(json).expect(json).content;
        assert_eq!(text(r#"{"role":"user","content":"hi"}"#), "hi");
        assert_eq!(
            text(
                r#"{"role":"user","name":"ann","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#
            ),
            "a\nb"
        );
        assert_eq!(text(r#"{"role":"assistant","content":null}"#), "");
        assert_eq!(text(r#"{"role":"assistant"}"#), "");
        for (json, says) in [
            (
                r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}"#,
                "content part 1 is \"image_url\": only text parts",
            ),
            (
                r#"{"role":"user","content":[{"type":"text"}]}"#,
                "without a \"text\"",
            ),
            (r#"{"role":"user","content":[{"text":"a"}]}"#, "no \"type\""),
            (r#"{"role":"user","content":7}"#, "a string or an array"),
        ] {
            let e = parse(json).expect_err(json);
            assert!(e.contains(says), "{json}: {e}");
        }
    }

    /// Two writers continuing one file: every turn survives.
    #[test]
    fn concurrent_appends_keep_every_turn() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.json");
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let turn = Exchange {
                            question: format!("q{w}-{i}"),
                            answer: "a".into(),
                        };
                        append(&path, turn).expect("append");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer");
        }
        let turns = load(&path).expect("load");
        assert_eq!(turns.len(), 50);
        for w in 0..2 {
            let mine: Vec<_> = turns
                .iter()
                .filter(|t| t.question.starts_with(&format!("q{w}-")))
                .map(|t| t.question.clone())
                .collect();
            let want: Vec<_> = (0..25).map(|i| format!("q{w}-{i}")).collect();
            assert_eq!(mine, want, "in order");
        }
    }

    #[test]
    fn a_conversation_file_round_trips_and_reads_messages_too() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.json");
        assert!(load(&path).expect("missing is empty").is_empty());
        let turns = vec![Exchange {
            question: "q".into(),
            answer: "a".into(),
        }];
        save(&path, &turns).expect("save");
        assert_eq!(load(&path).expect("load"), turns);
        std::fs::write(
            &path,
            r#"[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]"#,
        )
        .expect("write");
        assert_eq!(load(&path).expect("messages"), turns);
        std::fs::write(&path, "{not json").expect("write");
        let e = load(&path).expect_err("refused").to_string();
        assert!(e.contains("not a conversation"), "{e}");
    }
}

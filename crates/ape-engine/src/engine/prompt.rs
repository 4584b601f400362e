//! The prompt every mode shares: `prefix · chunk₁ … chunkₙ · question`.
//!
//! The prefix is the chat template's opening up to the start of the user's
//! message (system prompt included), so the "attention sink" tokens appear
//! once and chunks start at a fixed position after them. The question closes
//! the user turn and opens the assistant's. Sequential and parallel prefill
//! see exactly the same token sequences; only how chunks are encoded differs.

use super::{Engine, EngineError, TokenId};

/// The system prompt used when the caller has none.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer the question \
using the documents in the user's message. Be concise. If the documents do not contain \
the answer, say so.";

/// Where a plain-layout answer ends ([`PromptLayout::stops`]).
pub const PLAIN_STOPS: &[&str] = &["\n\n", "\nQuestion:"];

const MARK: &str = "\u{1}APE-CHAT-USER-MESSAGE\u{1}";

/// Token layout derived from the model's own chat template.
#[derive(Clone, Debug)]
pub struct PromptLayout {
    /// Shared prefix tokens (BOS if the model wants one, template header,
    /// system prompt, start of the user turn).
    pub prefix: Vec<TokenId>,
    /// Template text that ends the user turn and starts the answer.
    turn_end: Vec<TokenId>,
    /// An earlier exchange's glue: after its question (the assistant's
    /// turn opens) and after its answer (the next user turn opens).
    reply_open: Vec<TokenId>,
    reply_close: Vec<TokenId>,
    /// Where the layout came from.
    pub template: Template,
}

/// How the prompt is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Template {
    /// The model's own chat template.
    Model,
    /// Plain text ("system prompt, documents, Question: …, Answer:"): the
    /// model has no chat template, or llama.cpp does not recognise it (the
    /// reason).
    Plain(Option<String>),
}

impl PromptLayout {
    /// Splits the model's chat template around the user message. Models
    /// without a template get a plain-text layout.
    pub fn new(engine: &Engine, system: &str) -> Result<Self, EngineError> {
        let model = engine.model();
        let plain = || (format!("{system}\n\n"), "\nAnswer: ".to_string());
        // Earlier turns in plain text: "Question: …\nAnswer: …\n\n".
        let plain_glue = || ("\nAnswer: ".to_string(), "\n\n".to_string());
        let ((head, tail), glue, template) = match model.chat_template(None) {
            Ok(_) => match split_template(engine, system) {
                Ok(parts) => {
                    // A template that cannot render a conversation keeps
                    // earlier turns as text inside the user's message.
                    let glue = turn_glue(engine, system).unwrap_or_else(|_| plain_glue());
                    (parts, glue, Template::Model)
                }
                // A template llama.cpp cannot apply: answer in plain text
                // rather than not at all.
                Err(e) => (plain(), plain_glue(), Template::Plain(Some(e.to_string()))),
            },
            Err(_) => (plain(), plain_glue(), Template::Plain(None)),
        };
        let head_tokens = engine.tokens(&head, true);
        let vocab = model.vocab();
        let mut prefix = Vec::new();
        // A template that writes BOS itself gets no second one.
        if vocab.should_add_bos() && head_tokens.first() != Some(&vocab.bos().0) {
            prefix.push(vocab.bos().0);
        }
        prefix.extend(head_tokens);
        Ok(Self {
            prefix,
            turn_end: engine.tokens(&tail, true),
            reply_open: engine.tokens(&glue.0, true),
            reply_close: engine.tokens(&glue.1, true),
            template,
        })
    }

    /// Appends `newlines` newline tokens to the prefix: a prefix variant
    /// (the paper grows it by 2, 10, 20, 40) that `ape-chat calibrate`
    /// searches.
    pub fn pad(mut self, engine: &Engine, newlines: usize) -> Self {
        if let Some(nl) = newline_token(engine) {
            self.prefix.extend(std::iter::repeat_n(nl, newlines));
        }
        self
    }

    /// Tokens of one chunk as it is encoded: its text, then a blank line.
    pub fn chunk(&self, engine: &Engine, text: &str) -> Vec<TokenId> {
        engine.tokenize(&format!("{}\n\n", text.trim_end()))
    }

    /// Texts that end an answer: none with a chat template (its end-of-turn
    /// token does), and in the plain layout a blank line or the start of a
    /// next "Question:", which is how a base model goes on after answering.
    pub fn stops(&self) -> &'static [&'static str] {
        match self.template {
            Template::Model => &[],
            Template::Plain(_) => PLAIN_STOPS,
        }
    }

    /// Tokens of the question, closing the user turn.
    pub fn question(&self, engine: &Engine, question: &str) -> Vec<TokenId> {
        self.conversation(engine, &[], question)
    }

    /// Tokens after the chunks when the question follows earlier turns:
    /// the first earlier question closes the user's message that holds the
    /// documents, then each answer and question are turns of their own, as
    /// the model's template writes a conversation; the question closes the
    /// last user turn. User and answer text is never read as template
    /// syntax. No earlier turns: exactly [`Self::question`].
    pub fn conversation(
        &self,
        engine: &Engine,
        earlier: &[(&str, &str)],
        question: &str,
    ) -> Vec<TokenId> {
        let mut t = Vec::new();
        for (q, a) in earlier {
            t.extend(engine.tokenize(&format!("Question: {}", q.trim())));
            t.extend_from_slice(&self.reply_open);
            t.extend(engine.tokenize(a.trim()));
            t.extend_from_slice(&self.reply_close);
        }
        t.extend(engine.tokenize(&format!("Question: {}", question.trim())));
        t.extend_from_slice(&self.turn_end);
        t
    }
}

/// The template's text between an earlier question and its answer, and
/// between that answer and the next question, read off a rendered
/// two-turn conversation.
fn turn_glue(engine: &Engine, system: &str) -> Result<(String, String), EngineError> {
    let marks = ["\u{1}APE-Q1\u{1}", "\u{1}APE-A1\u{1}", "\u{1}APE-Q2\u{1}"];
    let text = engine.render_chat(&[
        ("system", system),
        ("user", marks[0]),
        ("assistant", marks[1]),
        ("user", marks[2]),
    ])?;
    let between = |a: &str, b: &str| -> Option<String> {
        let (_, rest) = text.split_once(a)?;
        Some(rest.split_once(b)?.0.to_string())
    };
    match (between(marks[0], marks[1]), between(marks[1], marks[2])) {
        (Some(open), Some(close)) => Ok((open, close)),
        _ => Err(EngineError::Template(
            "template does not write a conversation's turns in order".into(),
        )),
    }
}

/// The template's text before and after the user's message.
fn split_template(engine: &Engine, system: &str) -> Result<(String, String), EngineError> {
    let text = engine.render_chat(&[("system", system), ("user", MARK)])?;
    let (h, t) = text.split_once(MARK).ok_or_else(|| {
        EngineError::Template("template does not contain the user message".into())
    })?;
    Ok((h.to_string(), t.to_string()))
}

/// The token whose text is exactly a newline. Tokenizing "\n" alone gives
/// SentencePiece vocabularies (Llama 2, Mistral, Gemma) a leading "▁" (a
/// space) first, which is not what padding should repeat.
pub fn newline_token(engine: &Engine) -> Option<TokenId> {
    engine
        .tokenize("\n")
        .into_iter()
        .find(|&t| engine.token_bytes(t) == b"\n")
}

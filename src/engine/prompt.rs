//! The prompt every mode shares: `prefix · chunk₁ … chunkₙ · question`.
//!
//! The prefix is the chat template's opening up to the start of the user's
//! message (system prompt included), so the "attention sink" tokens appear
//! once and chunks start at a fixed position after them. The question closes
//! the user turn and opens the assistant's. Sequential and parallel prefill
//! see exactly the same token sequences; only how chunks are encoded differs.

use llama_cpp_2::model::LlamaChatMessage;

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
        let ((head, tail), template) = match model.chat_template(None) {
            Ok(tmpl) => match split_template(model, &tmpl, system) {
                Ok(parts) => (parts, Template::Model),
                // A template llama.cpp cannot apply: answer in plain text
                // rather than not at all.
                Err(e) => (plain(), Template::Plain(Some(e.to_string()))),
            },
            Err(_) => (plain(), Template::Plain(None)),
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
        let mut t = engine.tokenize(&format!("Question: {}", question.trim()));
        t.extend_from_slice(&self.turn_end);
        t
    }
}

/// The template's text before and after the user's message.
fn split_template(
    model: &llama_cpp_2::model::LlamaModel,
    tmpl: &llama_cpp_2::model::LlamaChatTemplate,
    system: &str,
) -> Result<(String, String), EngineError> {
    let msg = |role: &str, content: &str| {
        LlamaChatMessage::new(role.into(), content.into())
            .map_err(|e| EngineError::Template(e.to_string()))
    };
    let chat = [msg("system", system)?, msg("user", MARK)?];
    let text = model
        .apply_chat_template(tmpl, &chat, true)
        .map_err(|e| EngineError::Template(e.to_string()))?;
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

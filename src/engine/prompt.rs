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

const MARK: &str = "\u{1}APE-CHAT-USER-MESSAGE\u{1}";

/// Token layout derived from the model's own chat template.
#[derive(Clone, Debug)]
pub struct PromptLayout {
    /// Shared prefix tokens (BOS if the model wants one, template header,
    /// system prompt, start of the user turn).
    pub prefix: Vec<TokenId>,
    /// Template text that ends the user turn and starts the answer.
    turn_end: Vec<TokenId>,
}

impl PromptLayout {
    /// Splits the model's chat template around the user message. Models
    /// without a template get a plain-text layout.
    pub fn new(engine: &Engine, system: &str) -> Result<Self, EngineError> {
        let model = engine.model();
        let (head, tail) = match model.chat_template(None) {
            Ok(tmpl) => {
                let msg = |role: &str, content: &str| {
                    LlamaChatMessage::new(role.into(), content.into())
                        .map_err(|e| EngineError::Template(e.to_string()))
                };
                let chat = [msg("system", system)?, msg("user", MARK)?];
                let text = model
                    .apply_chat_template(&tmpl, &chat, true)
                    .map_err(|e| EngineError::Template(e.to_string()))?;
                let (h, t) = text.split_once(MARK).ok_or_else(|| {
                    EngineError::Template("template does not contain the user message".into())
                })?;
                (h.to_string(), t.to_string())
            }
            Err(_) => (format!("{system}\n\n"), "\nAnswer: ".to_string()),
        };
        let mut prefix = Vec::new();
        let vocab = model.vocab();
        if vocab.should_add_bos() {
            prefix.push(vocab.bos().0);
        }
        prefix.extend(engine.tokens(&head, true));
        Ok(Self {
            prefix,
            turn_end: engine.tokens(&tail, true),
        })
    }

    /// Appends `newlines` newline tokens to the prefix: a prefix variant
    /// (the paper grows it by 2, 10, 20, 40) that `ape-chat calibrate`
    /// searches.
    pub fn pad(mut self, engine: &Engine, newlines: usize) -> Self {
        if let Some(&nl) = engine.tokenize("\n").first() {
            self.prefix.extend(std::iter::repeat_n(nl, newlines));
        }
        self
    }

    /// Tokens of one chunk as it is encoded: its text, then a blank line.
    pub fn chunk(&self, engine: &Engine, text: &str) -> Vec<TokenId> {
        engine.tokenize(&format!("{}\n\n", text.trim_end()))
    }

    /// Tokens of the question, closing the user turn.
    pub fn question(&self, engine: &Engine, question: &str) -> Vec<TokenId> {
        let mut t = engine.tokenize(&format!("Question: {}", question.trim()));
        t.extend_from_slice(&self.turn_end);
        t
    }
}
